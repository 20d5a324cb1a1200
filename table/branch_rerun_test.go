package table_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/faults"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/reruntest"
	"github.com/icerun/icerun/table"
)

var wapIdent = icetable.Identifier{"db", "fact_orders"}

// wapSetup creates fact_orders with two days on main.
func wapSetup(ctx context.Context, cat catalog.Catalog) error {
	if err := orderdata.CreateTable(ctx, cat, wapIdent); err != nil {
		return err
	}
	w, err := table.Open(ctx, cat, wapIdent, table.WithCodeVersion("v1"))
	if err != nil {
		return err
	}
	for i, n := range []int{40, 30} {
		d := day0.AddDate(0, 0, i)
		k, err := w.Key("event_date=" + d.Format("2006-01-02"))
		if err != nil {
			return err
		}
		if _, err := w.ReplacePartition(ctx, k, reader(orderdata.Day(d, n))); err != nil {
			return err
		}
	}
	return nil
}

// wapRun is a write-audit-publish pipeline: two partitions written to
// branch audit, main moving meanwhile (when moveMain; else the publish is
// a fast-forward), an audit of the branch, the publish. It stops before
// step stop (runs every step for -1).
func wapRun(ctx context.Context, cat catalog.Catalog, moveMain bool, stop int) error {
	bw, err := table.Open(ctx, cat, wapIdent, table.WithBranch("audit"), table.WithCodeVersion("v2"))
	if err != nil {
		return err
	}
	mw, err := table.Open(ctx, cat, wapIdent, table.WithCodeVersion("v1"))
	if err != nil {
		return err
	}
	replace := func(w *table.Writer, day, n int) func() error {
		return func() error {
			d := day0.AddDate(0, 0, day)
			k, err := w.Key("event_date=" + d.Format("2006-01-02"))
			if err != nil {
				return err
			}
			_, err = w.ReplacePartition(ctx, k, reader(orderdata.Day(d, n)))
			return err
		}
	}
	audit := func() error {
		k, err := bw.Key("event_date=" + day0.Format("2006-01-02"))
		if err != nil {
			return err
		}
		rows, err := bw.ReadBranch(ctx, "audit", k)
		if err != nil {
			return err
		}
		defer rows.Release()
		var n int64
		for rows.Next() {
			n += rows.RecordBatch().NumRows()
		}
		if n != 10 {
			return fmt.Errorf("audit: branch holds %d rows of day0, want 10", n)
		}
		return rows.Err()
	}
	publish := func() error { _, err := mw.Publish(ctx, "audit"); return err }
	steps := []func() error{replace(bw, 0, 10), replace(bw, 1, 12), replace(mw, 2, 7), audit, publish}
	if !moveMain {
		steps[2] = func() error { return nil }
	}
	for i, step := range steps {
		if i == stop {
			return nil // the process died here
		}
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func TestPublishAfterCrashIsCleanRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clean, _ := catalogtest.New(t)
	require.NoError(t, wapSetup(ctx, clean))
	require.NoError(t, wapRun(ctx, clean, true, -1))
	want := catalogtest.CanonicalScan(t, clean, wapIdent)

	for stop := 1; stop <= 4; stop++ { // after a branch commit, before the publish
		t.Run(fmt.Sprintf("stop before step %d", stop), func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			require.NoError(t, wapSetup(ctx, cat))
			require.NoError(t, wapRun(ctx, cat, true, stop))
			require.NoError(t, wapRun(ctx, cat, true, -1), "rerun")
			require.Equal(t, string(want), string(catalogtest.CanonicalScan(t, cat, wapIdent)))
		})
	}
}

func TestPublishRerunKit(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the rerun kit over every step: not in -short")
	}
	for _, tt := range []struct {
		name     string
		moveMain bool
	}{{"re-plan", true}, {"fast-forward", false}} {
		t.Run(tt.name, func(t *testing.T) {
			reruntest.Check(t, reruntest.Config{
				Setup:  wapSetup,
				Run:    func(ctx context.Context, cat catalog.Catalog) error { return wapRun(ctx, cat, tt.moveMain, -1) },
				Tables: []reruntest.Table{{Ident: wapIdent, Key: []string{"order_id"}}},
			})
		})
	}
}

func TestPublishLostReplyIsFoundAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		name     string
		moveMain bool
	}{{"re-plan", true}, {"fast-forward", false}} {
		t.Run(tt.name, func(t *testing.T) {
			publish := func(in *faults.Injector) (commit.Result, catalog.Catalog, error) {
				cat, _ := catalogtest.New(t)
				require.NoError(t, wapSetup(ctx, cat))
				require.NoError(t, wapRun(ctx, cat, tt.moveMain, 4)) // everything but the publish
				w, err := table.Open(ctx, faults.WrapCatalog(cat, in), wapIdent)
				require.NoError(t, err)
				res, err := w.Publish(ctx, "audit")
				return res, cat, err
			}
			counter := faults.New(faults.Fail, 0)
			want, clean, err := publish(counter)
			require.NoError(t, err)
			k := slices.IndexFunc(counter.Ops(), func(op string) bool { return strings.HasPrefix(op, "catalog.commit") })
			require.GreaterOrEqual(t, k, 0, "the publish commits: %v", counter.Ops())

			in := faults.New(faults.ApplyThenFail, k+1)
			got, cat, err := publish(in)
			require.NotEmpty(t, in.Fired(), "the fault fired")
			require.NoError(t, err, "the commit applied: the publish is found again and succeeds")
			require.Equal(t, want.Partitions, got.Partitions)
			require.False(t, got.Unchanged)
			require.Equal(t, string(catalogtest.CanonicalScan(t, clean, wapIdent)), string(catalogtest.CanonicalScan(t, cat, wapIdent)))
		})
	}
}
