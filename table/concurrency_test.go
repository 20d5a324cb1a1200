package table_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// TestMain lets the test binary act as a writer process: with
// ICERUN_WRITER="dir day tag rows" in the environment it replaces one day of
// db.fact_orders in the catalog in dir with rows tagged by amount=tag, and
// exits.
func TestMain(m *testing.M) {
	if spec := os.Getenv("ICERUN_WRITER"); spec != "" {
		if err := writerProcess(spec); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func writerProcess(spec string) error {
	var dir, dayText string
	var tag, n int
	if _, err := fmt.Sscan(spec, &dir, &dayText, &tag, &n); err != nil {
		return err
	}
	ctx := context.Background()
	cat, err := internal.OpenSQLite(ctx, dir)
	if err != nil {
		return err
	}
	d, err := time.Parse(time.DateOnly, dayText)
	if err != nil {
		return err
	}
	return writeTagged(ctx, cat, icetable.Identifier{catalogtest.Namespace, "fact_orders"}, d, tag, n)
}

// tagged is n orders of day d whose amount is tag: which writer wrote a row.
func tagged(d time.Time, tag, n int) []orderdata.Order {
	orders := orderdata.Day(d, n)
	for i := range orders {
		orders[i].Amount = int64(tag)
	}
	return orders
}

func writeTagged(ctx context.Context, cat catalog.Catalog, ident icetable.Identifier, d time.Time, tag, n int) error {
	w, err := table.Open(ctx, cat, ident, table.WithCodeVersion("writer-"+strconv.Itoa(tag)))
	if err != nil {
		return err
	}
	k, err := w.Key("event_date=" + d.Format(time.DateOnly))
	if err != nil {
		return err
	}
	rows := orderdata.Reader(tagged(d, tag, n), 50)
	defer rows.Release()
	_, err = w.ReplacePartition(ctx, k, rows)
	return err
}

// writers runs fn for writer 0..n-1 at once, as goroutines or as processes.
type runner func(t *testing.T, dir string, cat catalog.Catalog, ident icetable.Identifier, days []time.Time, rows int) []error

func goroutines(t *testing.T, _ string, cat catalog.Catalog, ident icetable.Identifier, days []time.Time, rows int) []error {
	errs := make([]error, len(days))
	var wg sync.WaitGroup
	for i, d := range days {
		wg.Go(func() { errs[i] = writeTagged(context.Background(), cat, ident, d, 1000+i, rows) })
	}
	wg.Wait()
	return errs
}

func processes(t *testing.T, dir string, _ catalog.Catalog, _ icetable.Identifier, days []time.Time, rows int) []error {
	errs := make([]error, len(days))
	cmds := make([]*exec.Cmd, len(days))
	outs := make([]strings.Builder, len(days))
	for i, d := range days {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("ICERUN_WRITER=%s %s %d %d", dir, d.Format(time.DateOnly), 1000+i, rows))
		cmd.Stderr, cmd.Stdout = &outs[i], &outs[i]
		require.NoError(t, cmd.Start())
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			errs[i] = fmt.Errorf("%w: %s", err, outs[i].String())
		}
	}
	return errs
}

// tagsByDay reads which writer tags each day holds, and how many rows.
func tagsByDay(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(catalogtest.CanonicalScan(t, cat, ident))), "\n") {
		if line == "" {
			continue
		}
		cells := strings.Split(line, "|")
		day, tag := cells[5], cells[2]
		if out[day] == nil {
			out[day] = map[string]int{}
		}
		out[day][tag]++
	}
	return out
}

func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	runners := map[string]runner{"goroutines": goroutines, "processes": processes}
	if testing.Short() {
		delete(runners, "processes") // spawns a process per writer; the goroutines hold the same races
	}
	for name, run := range runners {
		t.Run(name+"/same partition", func(t *testing.T) {
			cat, ident, dir := ordersTable(t)
			const writers, rows = 4, 200
			days := make([]time.Time, writers)
			for i := range days {
				days[i] = day0
			}
			for i, err := range run(t, dir, cat, ident, days, rows) {
				assert.NoError(t, err, "writer %d", i)
			}
			got := tagsByDay(t, cat, ident)
			require.Len(t, got, 1)
			tags := got[day0.Format(time.DateOnly)]
			assert.Len(t, tags, 1, "the partition must hold exactly one writer's rows, got %v", tags)
			for _, n := range tags {
				assert.Equal(t, rows, n)
			}
			assert.Empty(t, catalogtest.UnreferencedMetadata(t, cat, ident), "metadata files of lost commit races must be removed")
		})
		t.Run(name+"/different partitions on a table with no snapshot", func(t *testing.T) {
			cat, ident, dir := ordersTable(t)
			const writers, rows = 4, 100
			days := make([]time.Time, writers)
			for i := range days {
				days[i] = day0.AddDate(0, 0, i)
			}
			for i, err := range run(t, dir, cat, ident, days, rows) {
				assert.NoError(t, err, "writer %d", i)
			}
			got := tagsByDay(t, cat, ident)
			assert.Len(t, got, writers, "every writer's partition must land")
			for i, d := range days {
				assert.Equal(t, map[string]int{strconv.Itoa(1000 + i): rows}, got[d.Format(time.DateOnly)])
			}
		})
	}
}

// conflictCatalog refuses every commit as a conflict, like a catalog whose
// table is always moved by someone else.
type conflictCatalog struct {
	catalog.Catalog
	commits int
}

func (c *conflictCatalog) CommitTable(ctx context.Context, ident icetable.Identifier, reqs []icetable.Requirement, ups []icetable.Update) (icetable.Metadata, string, error) {
	c.commits++
	return nil, "", fmt.Errorf("%w: metadata-location moved underneath us", icetable.ErrCommitFailed)
}

func (c *conflictCatalog) LoadTable(ctx context.Context, ident icetable.Identifier) (*icetable.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	// Route the table's commits through this wrapper.
	return icetable.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, c), nil
}

func TestRetryBudgetSpentIsErrConflict(t *testing.T) {
	t.Parallel()
	cat, ident, dir := ordersTable(t)
	replaceDay(t, open(t, cat, ident), day0, 10)
	files := catalogtest.DataFiles(t, dir)
	cc := &conflictCatalog{Catalog: cat}
	w := open(t, cc, ident, table.WithRetry(commit.Policy{Attempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}))
	res, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), reader(orderdata.Day(day0, 5)))
	require.ErrorIs(t, err, commit.ErrConflict)
	assert.Equal(t, 3, res.Attempts)
	assert.Equal(t, 3, cc.commits)
	assert.Equal(t, files, catalogtest.DataFiles(t, dir), "staged files must be removed after a conflict")
}

func TestOpenRejectsBadRetryPolicy(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	_, err := table.Open(context.Background(), cat, ident, table.WithRetry(commit.Policy{MinBackoff: time.Second, MaxBackoff: time.Millisecond}))
	assert.ErrorIs(t, err, table.ErrBadOption)
}
