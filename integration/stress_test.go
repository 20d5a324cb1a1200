//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stressScale is writers x rounds over partitions; ICERUN_STRESS_ROUNDS
// (and ICERUN_STRESS_WRITERS) scale it. The default is the 8 x 25.
func stressScale(t *testing.T) (writers, rounds, parts, rows int) {
	writers, rounds, parts, rows = 8, 25, 4, 20
	for name, v := range map[string]*int{"ICERUN_STRESS_WRITERS": &writers, "ICERUN_STRESS_ROUNDS": &rounds} {
		if s := os.Getenv(name); s != "" {
			n, err := strconv.Atoi(s)
			require.NoError(t, err, name)
			*v = n
		}
	}
	return writers, rounds, parts, rows
}

// TestStress runs 8 writers x 25 rounds over 4 overlapping partitions, as
// goroutines and as OS processes, on SQLite and PostgreSQL, and asserts 0
// mixed and 0 lost partitions: every partition holds exactly the rows of
// the last successful replacement of it, in commit order.
func TestStress(t *testing.T) {
	writers, rounds, parts, rows := stressScale(t)
	for _, mode := range []string{"goroutines", "processes"} {
		t.Run(mode, func(t *testing.T) {
			eachTarget(t, func(t *testing.T, e env) {
				if e.Target != "sqlite" && e.Target != "pg" {
					t.Skip("stress runs on the SQL catalogs")
				}
				cat := e.catalog(t)
				ident := e.ordersTable(t, cat, "stress")
				jobs := make([]job, writers)
				for i := range jobs {
					jobs[i] = job{Env: e, Table: "stress", Rows: rows, Days: days(parts), Rounds: rounds, Index: i}
				}
				start := time.Now()
				var outs [][]outcome
				if mode == "processes" {
					outs = runJobs(t, jobs)
				} else {
					outs = runJobsInProcess(t, jobs)
				}
				elapsed := time.Since(start)

				tbl, err := cat.LoadTable(context.Background(), ident)
				require.NoError(t, err)
				seq := map[int64]int64{}
				for _, s := range tbl.Metadata().Snapshots() {
					seq[s.SnapshotID] = s.SequenceNumber
				}
				last := map[string]outcome{} // by day: the success latest in commit order
				attempts := map[int]int{}
				var ok, failed, commits int
				for _, os := range outs {
					for _, o := range os {
						if o.Err != "" {
							failed++
							t.Errorf("replace %s tag %d: %s", o.Day, o.Tag, o.Err)
							continue
						}
						ok++
						attempts[o.Attempts]++
						if o.Unchanged {
							continue
						}
						commits++
						_, found := seq[o.SnapshotID]
						assert.True(t, found, "snapshot %d of a successful replace is not in the table: lost", o.SnapshotID)
						if p, seen := last[o.Day]; !seen || seq[o.SnapshotID] > seq[p.SnapshotID] {
							last[o.Day] = o
						}
					}
				}
				assert.Equal(t, writers*rounds, ok+failed, "replacements reported")
				assert.Equal(t, commits, len(tbl.Metadata().Snapshots()), "snapshots = got, want one per successful replace")

				got := tagsByDay(t, cat, ident)
				mixed, lost := 0, 0
				for _, day := range days(parts) {
					tags := got[day]
					if len(tags) != 1 {
						mixed++
						t.Errorf("partition %s is mixed: %v", day, tags)
						continue
					}
					want := strconv.Itoa(last[day].Tag)
					if tags[want] != rows {
						lost++
						t.Errorf("partition %s = %v, want %d rows of tag %s (its last commit)", day, tags, rows, want)
					}
				}
				assertNoOrphanData(t, e, ident)
				keys := make([]int, 0, len(attempts))
				for k := range attempts {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				var dist []string
				for _, k := range keys {
					dist = append(dist, fmt.Sprintf("%d:%d", k, attempts[k]))
				}
				t.Logf("STRESS %s/%s: %d writers x %d rounds over %d partitions: %d ok, %d failed, %d mixed, %d lost; %d commits in %.1fs = %.1f commits/s; attempts distribution {%s}",
					mode, e.Target, writers, rounds, parts, ok, failed, mixed, lost, commits, elapsed.Seconds(), float64(commits)/elapsed.Seconds(), strings.Join(dist, " "))
			})
		})
	}
}
