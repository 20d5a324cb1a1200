package table_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// racingCatalog lands another writer's commit (race) before every commit
// that goes through it: every attempt meets a change it did not plan on.
type racingCatalog struct {
	catalog.Catalog
	race func()
}

func (c *racingCatalog) CommitTable(ctx context.Context, ident icetable.Identifier, reqs []icetable.Requirement, ups []icetable.Update) (icetable.Metadata, string, error) {
	c.race()
	return c.Catalog.CommitTable(ctx, ident, reqs, ups)
}

func (c *racingCatalog) LoadTable(ctx context.Context, ident icetable.Identifier) (*icetable.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	return icetable.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, c), nil
}

// TestRetryBudgetSpentReportsEveryAttempt: a change that loses the race
// for its partition on every attempt (merge-on-read and copy-on-write
// upserts, which plan the partition again after a lost race, and a
// delete, and a compaction, which rewrites the partition again) fails with ErrConflict after the policy's budget, and says so:
// the error and Result.Attempts count every attempt of the call, not
// those of its last round of planning.
func TestRetryBudgetSpentReportsEveryAttempt(t *testing.T) {
	t.Parallel()
	const budget = 3
	ops := []struct {
		name    string
		props   iceberg.Properties
		run     func(ctx context.Context, w *table.Writer) (commit.Result, error)
		deletes bool // a merge-on-read upsert first (a compaction then has deletes to fold)
	}{
		{"merge-on-read upsert", iceberg.Properties{"format-version": "2", table.PropertyUpsertMode: table.ModeMergeOnRead}, func(ctx context.Context, w *table.Writer) (commit.Result, error) {
			return w.Upsert(ctx, reader(changedOrders(40, 60, 1_000_000)), "order_id")
		}, false},
		{"copy-on-write upsert", iceberg.Properties{"format-version": "2"}, func(ctx context.Context, w *table.Writer) (commit.Result, error) {
			return w.Upsert(ctx, reader(changedOrders(40, 60, 1_000_000)), "order_id")
		}, false},
		{"merge-on-read delete", iceberg.Properties{"format-version": "2"}, func(ctx context.Context, w *table.Writer) (commit.Result, error) {
			k, err := w.Key("event_date=" + day0.Format(time.DateOnly))
			if err != nil {
				return commit.Result{}, err
			}
			return w.Delete(ctx, k, reader(orderdata.Day(day0, 60)[50:]), "order_id")
		}, false},
		{"compaction", iceberg.Properties{"format-version": "2", table.PropertyUpsertMode: table.ModeMergeOnRead}, func(ctx context.Context, w *table.Writer) (commit.Result, error) {
			k, err := w.Key("event_date=" + day0.Format(time.DateOnly))
			if err != nil {
				return commit.Result{}, err
			}
			return w.Compact(ctx, k)
		}, true},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			ctx := context.Background()
			cat, _ := catalogtest.New(t)
			ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, op.props)
			replaceDay(t, open(t, cat, ident), day0, 100)
			if op.deletes {
				upsert(t, open(t, cat, ident), changedOrders(10, 20, 5_000))
			}
			races := 0
			racer := &racingCatalog{Catalog: cat, race: func() {
				races++
				upsert(t, open(t, cat, ident), changedOrders(30, 70, int64(races)*10_000))
			}}
			w := open(t, racer, ident, table.WithRetry(commit.Policy{Attempts: budget, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond}))
			res, err := op.run(ctx, w)
			require.ErrorIs(t, err, commit.ErrConflict, "%s losing every race", op.name)
			msg := err.Error()
			assert.Contains(t, msg, fmt.Sprintf("after %d attempts", budget), "%s losing every race: error", op.name)
			for n := 1; n < budget; n++ {
				assert.NotContains(t, msg, fmt.Sprintf("after %d attempts", n), "%s: error counts only the last round", op.name)
			}
			assert.Equal(t, budget, res.Attempts, "%s losing every race: Result.Attempts", op.name)
			assert.False(t, strings.Contains(msg, "  ") || strings.Contains(msg, " :"), "error %q has an empty word", msg)
		})
	}
}
