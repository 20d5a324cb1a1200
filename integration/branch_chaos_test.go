//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/table"
)

// branchChaosRounds is the rounds each actor of TestBranchChaos makes
// (ICERUN_BRANCH_CHAOS_ROUNDS; default 6).
func branchChaosRounds(t *testing.T) int {
	rounds := 6
	if s := os.Getenv("ICERUN_BRANCH_CHAOS_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "ICERUN_BRANCH_CHAOS_ROUNDS")
		rounds = n
	}
	return rounds
}

// chaosRows is the number of rows of input tag: inputs differ in size, so
// that a partition holding part of one is seen.
func chaosRows(tag int) int { return 3 + tag%5 }

// TestBranchChaos races, without a commit lock, writers of main, writers
// of two branches and a publisher that publishes the branches (forced or
// not) and drops them now and then, over three partitions, on formats v2
// and v3, on the SQL catalogs. Every call either succeeds or fails with a
// typed error a caller can act on (a conflict past the retry budget, a
// publish conflict, a branch not there); afterwards every partition of
// main and of each branch holds exactly one writer's complete input.
func TestBranchChaos(t *testing.T) {
	rounds := branchChaosRounds(t)
	for _, version := range []int{2, 3} {
		t.Run("v"+strconv.Itoa(version), func(t *testing.T) {
			eachTarget(t, func(t *testing.T, e env) {
				if e.Target != "sqlite" && e.Target != "pg" {
					t.Skip("the chaos runs on the SQL catalogs")
				}
				runBranchChaos(t, e, version, rounds)
			})
		})
	}
}

// chaosActor is one goroutine of the chaos: a writer of ref (main or a
// branch) or the publisher.
type chaosActor struct {
	name   string
	branch string // "" for main; the publisher's is ""
	index  int
}

func runBranchChaos(t *testing.T, e env, version, rounds int) {
	ctx := context.Background()
	cat := e.catalog(t)
	ident := icetable.Identifier{e.NS, "chaos"}
	spec := orderdata.Spec
	_, err := cat.CreateTable(ctx, ident, orderdata.Schema, catalog.WithPartitionSpec(&spec),
		catalog.WithProperties(iceberg.Properties{icetable.PropertyFormatVersion: strconv.Itoa(version)}))
	require.NoError(t, err)
	parts := days(3)
	// Main holds every partition before the chaos starts: branches are
	// cut from a snapshot. (Cuts from an empty table make snapshots
	// without a parent, whose races TestBranchCutFromEmptyTableAfterMainCommitted
	// in package table covers, with one known gap: two branches cut at
	// once from an empty table.)
	written := map[int]string{} // tag -> the day its input was written to
	seed, err := table.Open(ctx, cat, ident)
	require.NoError(t, err)
	for i, day := range parts {
		written[i+1] = day
		_, err := replaceTagged(ctx, seed, day, i+1, chaosRows(i+1), "", 0)
		require.NoError(t, err)
	}
	branches := []string{"b0", "b1"}
	actors := []chaosActor{{"main0", "", 0}, {"main1", "", 1}, {"branch0", "b0", 2}, {"branch1", "b1", 3}, {"publisher", "", 4}}

	var mu sync.Mutex
	counts := map[string]int{} // outcome counts, by kind
	var untyped []string
	note := func(actor, op string, res commit.Result, err error) {
		mu.Lock()
		defer mu.Unlock()
		if res.Attempts > 1 {
			counts["retried"]++
		}
		switch {
		case err == nil:
			counts["ok"]++
		case errors.Is(err, commit.ErrConflict):
			counts["conflict"]++
		case errors.Is(err, commit.ErrPublishConflict):
			counts["publish conflict"]++
		case errors.Is(err, commit.ErrNoSuchBranch):
			counts["no branch"]++
		default:
			untyped = append(untyped, fmt.Sprintf("%s %s: %v", actor, op, err))
		}
	}
	var wg sync.WaitGroup
	for _, a := range actors {
		wg.Go(func() {
			acat := e.catalog(t)
			var opts []table.Option
			if a.branch != "" {
				opts = append(opts, table.WithBranch(a.branch))
			}
			w, err := table.Open(ctx, acat, ident, opts...)
			if err != nil {
				note(a.name, "open", commit.Result{}, err)
				return
			}
			forced, err := table.Open(ctx, acat, ident, table.WithForce())
			if err != nil {
				note(a.name, "open", commit.Result{}, err)
				return
			}
			for r := range rounds {
				if a.name == "publisher" {
					// Paced so that publishes interleave with the
					// branches' writes instead of preceding them.
					time.Sleep(150 * time.Millisecond)
					b := branches[r%len(branches)]
					pub := w
					if r%3 == 2 {
						pub = forced
					}
					res, err := pub.Publish(ctx, b)
					note(a.name, "publish "+b, res, err)
					if r%4 == 3 {
						note(a.name, "drop "+b, commit.Result{}, w.DropBranch(ctx, b))
					}
					continue
				}
				tag := 1000*(a.index+1) + r
				day := parts[(a.index+r)%len(parts)]
				mu.Lock()
				written[tag] = day
				mu.Unlock()
				res, err := replaceTagged(ctx, w, day, tag, chaosRows(tag), "", 0)
				note(a.name, "replace "+day, res, err)
			}
		})
	}
	wg.Wait()

	for _, u := range untyped {
		t.Errorf("untyped failure: %s", u)
	}
	w, err := table.Open(ctx, cat, ident)
	require.NoError(t, err)
	violations := 0
	for _, ref := range append([]string{icetable.MainBranch}, branches...) {
		for _, day := range parts {
			if v := checkChaosPartition(t, w, ref, day, written); v != "" {
				violations++
				t.Errorf("%s %s: %s", ref, day, v)
			}
		}
	}
	assertNoOrphanData(t, e, ident)
	t.Logf("BRANCH CHAOS %s v%d: %d actors x %d rounds: %d ok (%d after a lost race); typed failures: %d conflicts past the retry budget, %d publish conflicts, %d branches not there; %d untyped, %d violations",
		e.Target, version, len(actors), rounds, counts["ok"], counts["retried"], counts["conflict"], counts["publish conflict"], counts["no branch"], len(untyped), violations)
}

// checkChaosPartition returns what is wrong with partition day on ref:
// "" when it holds exactly one complete input written to day (or nothing,
// or ref does not exist).
func checkChaosPartition(t *testing.T, w *table.Writer, ref, day string, written map[int]string) string {
	t.Helper()
	k, err := w.Key("event_date=" + day)
	require.NoError(t, err)
	rows, err := w.ReadBranch(context.Background(), ref, k)
	if errors.Is(err, commit.ErrNoSuchBranch) {
		return ""
	}
	require.NoError(t, err)
	defer rows.Release()
	var ids []int64
	tags := map[int64]bool{}
	for rows.Next() {
		rec := rows.RecordBatch()
		id := rec.Column(0).(*array.Int64)
		amount := rec.Column(2).(*array.Int64)
		for i := range int(rec.NumRows()) {
			ids = append(ids, id.Value(i))
			tags[amount.Value(i)] = true
		}
	}
	require.NoError(t, rows.Err())
	if len(ids) == 0 {
		return ""
	}
	if len(tags) != 1 {
		return fmt.Sprintf("mixed inputs %v", tags)
	}
	var tag int
	for v := range tags {
		tag = int(v)
	}
	if written[tag] != day {
		return fmt.Sprintf("input %d was written to %q, not here", tag, written[tag])
	}
	var want []int64
	for _, o := range tagged(day, tag, chaosRows(tag)) {
		want = append(want, o.ID)
	}
	slices.Sort(ids)
	if !assert.ObjectsAreEqual(want, ids) {
		return fmt.Sprintf("input %d incomplete: order ids %v, want %v", tag, ids, want)
	}
	return ""
}
