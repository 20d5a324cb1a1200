package faults_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/cleanup"
	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/faults"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

var (
	day0 = time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	day1 = day0.AddDate(0, 0, 1)
)

// fixture is a table whose day0 and day1 partitions hold the "old" rows.
func fixture(t *testing.T) (catalog.Catalog, icetable.Identifier) {
	t.Helper()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
	w, err := table.Open(context.Background(), cat, ident)
	require.NoError(t, err)
	for _, d := range []time.Time{day0, day1} {
		replace(t, context.Background(), w, d, orderdata.Day(d, 50))
	}
	return cat, ident
}

// newRows is the input of the replacement under test: day0 with other rows.
func newRows() []orderdata.Order {
	orders := orderdata.Day(day0, 80)
	for i := range orders {
		orders[i].Amount = 7
	}
	return orders
}

func replace(t *testing.T, ctx context.Context, w *table.Writer, d time.Time, orders []orderdata.Order) (commit.Result, error) {
	t.Helper()
	k, err := w.Key("event_date=" + d.Format(time.DateOnly))
	require.NoError(t, err)
	rows := orderdata.Reader(orders, 32)
	defer rows.Release()
	res, err := w.ReplacePartition(ctx, k, rows)
	return res, err
}

// writerOpts make the operation sequence deterministic (one encoder) and
// keep a retried conflict quick.
var writerOpts = []table.Option{
	table.WithParallelWrite(1, 1<<20),
	table.WithRetry(commit.Policy{Attempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, Timeout: 20 * time.Second}),
}

func exists(path string) bool {
	_, err := os.Stat(strings.TrimPrefix(path, "file://"))
	return err == nil
}

// TestReplaceSurvivesEveryFault counts the operations of one replacement,
// then for every k and every kind of fault injects it at operation k and
// checks the invariants of a crash-safe replace.
func TestReplaceSurvivesEveryFault(t *testing.T) {
	if testing.Short() {
		t.Skip("every fault at every operation: not in -short")
	}
	ctx := context.Background()
	cat, ident := fixture(t)
	oldScan := catalogtest.CanonicalScan(t, cat, ident)
	counter := faults.New(faults.Fail, 0)
	w, err := table.Open(ctx, faults.WrapCatalog(cat, counter), ident, writerOpts...)
	require.NoError(t, err)
	_, err = replace(t, ctx, w, day0, newRows())
	require.NoError(t, err)
	newScan := catalogtest.CanonicalScan(t, cat, ident)
	ops := counter.Ops()
	require.NotEmpty(t, ops)
	require.NotEqual(t, oldScan, newScan)
	t.Logf("one replacement (open + replace) is %d operations:\n  %s", len(ops), strings.Join(ops, "\n  "))

	var points, unknown, metaLeft, outageLeft int
	for _, kind := range faults.Kinds {
		for k := 1; k <= len(ops); k++ {
			op := ops[k-1]
			if i := strings.IndexByte(op, ' '); i > 0 {
				op = op[:i]
			}
			t.Run(fmt.Sprintf("%s/%02d-%s", kind, k, op), func(t *testing.T) {
				points++
				cat, ident := fixture(t)
				before := catalogtest.Referenced(t, cat, ident)
				runCtx, cancel := context.WithCancel(ctx)
				defer cancel()
				in := faults.New(kind, k, faults.OnHang(cancel), faults.HangLimit(200*time.Millisecond))
				_, runErr := func() (commit.Result, error) {
					w, err := table.Open(runCtx, faults.WrapCatalog(cat, in), ident, writerOpts...)
					if err != nil {
						return commit.Result{}, err
					}
					return replace(t, runCtx, w, day0, newRows())
				}()
				got := catalogtest.CanonicalScan(t, cat, ident)
				switch {
				case string(got) == string(newScan):
				case string(got) == string(oldScan):
					assert.Error(t, runErr, "the table is at the old state but the replacement reported success")
				default:
					t.Fatalf("after %s at %s (err %v) the table is at neither the old nor the new state", kind, in.Fired(), runErr)
				}
				after := catalogtest.Referenced(t, cat, ident)
				for _, f := range append(before, after...) {
					assert.True(t, exists(f), "file %s, referenced by a snapshot, was deleted", f)
				}

				// The rerun, without faults, converges to the clean result.
				w, err := table.Open(ctx, cat, ident, writerOpts...)
				require.NoError(t, err)
				_, err = replace(t, ctx, w, day0, newRows())
				require.NoError(t, err, "rerun")
				assert.Equal(t, string(newScan), string(catalogtest.CanonicalScan(t, cat, ident)), "rerun differs from a clean run")

				// Leftovers: none, unless the outcome was unknown.
				tbl, err := cat.LoadTable(ctx, ident)
				require.NoError(t, err)
				rep, err := cleanup.Orphans(ctx, tbl, cleanup.AnyAge())
				require.NoError(t, err)
				var data, meta []string
				for _, f := range rep.Orphans {
					if strings.HasSuffix(f.Path, ".parquet") {
						data = append(data, f.Path)
					} else {
						meta = append(meta, f.Path)
					}
				}
				var uo *commit.UnknownOutcomeError
				if errors.As(runErr, &uo) {
					unknown++
					assert.ErrorIs(t, runErr, commit.ErrUnknownOutcome)
					var kept []string
					for _, f := range uo.Files {
						kept = append(kept, strings.TrimPrefix(f, "file://"))
					}
					for _, f := range data {
						assert.Contains(t, kept, strings.TrimPrefix(f, "file://"), "orphan %s is not one of the files reported with the unknown outcome", f)
					}
				} else if kind == faults.Outage && len(data) > 0 {
					// Storage is unreachable: the staged files cannot be
					// removed. The error must say so; the cleanup removes
					// them later (checked below).
					outageLeft += len(data)
					assert.Contains(t, runErr.Error(), "remov", "files of the failed attempt remain and the error does not report it")
				} else {
					assert.Empty(t, data, "data files of the failed attempt (err %v) remain", runErr)
				}
				// Manifests and manifest lists of a failed attempt: icerun
				// writes them itself and removes them, unless storage is
				// unreachable (then the error says so) or the outcome is
				// unknown (the table may reference them).
				switch {
				case uo != nil:
				case kind == faults.Outage && len(meta) > 0:
					assert.Contains(t, runErr.Error(), "could not remove", "metadata files of the failed attempt remain and the error does not report it")
				default:
					assert.Empty(t, meta, "metadata files of the failed attempt (err %v) remain", runErr)
				}
				metaLeft += len(meta)
				if len(rep.Orphans) > 0 {
					rep, err = cleanup.Orphans(ctx, tbl, cleanup.AnyAge(), cleanup.Execute())
					require.NoError(t, err)
					assert.Len(t, rep.Removed, len(rep.Orphans))
					assert.Equal(t, string(newScan), string(catalogtest.CanonicalScan(t, cat, ident)), "cleanup changed the table")
				}
			})
		}
	}
	t.Logf("fault points exercised: %d (%d operations x %d kinds); unknown outcomes: %d; data files kept by an outage (reported): %d; metadata files of failed attempts left for cleanup: %d",
		points, len(ops), len(faults.Kinds), unknown, outageLeft, metaLeft)
}

// TestInjectorCountsWithoutFailing is the k=0 contract: a counting
// injector never changes the outcome.
func TestInjectorCountsWithoutFailing(t *testing.T) {
	cat, ident := fixture(t)
	in := faults.New(faults.Outage, 0)
	w, err := table.Open(context.Background(), faults.WrapCatalog(cat, in), ident)
	require.NoError(t, err)
	_, err = replace(t, context.Background(), w, day0, newRows())
	require.NoError(t, err)
	assert.Empty(t, in.Fired())
	assert.Greater(t, in.Count(), 3)
}

// TestWrapIOUnsupported: an extension the wrapped IO lacks is an error,
// not a panic.
func TestWrapIOUnsupported(t *testing.T) {
	f := faults.WrapIO(context.Background(), bareIO{}, faults.New(faults.Fail, 0))
	_, err := f.Stat("x")
	assert.ErrorIs(t, err, errors.ErrUnsupported)
}

type bareIO struct{}

func (bareIO) Open(string) (iceio.File, error) { return nil, os.ErrNotExist }
func (bareIO) Remove(string) error             { return nil }
