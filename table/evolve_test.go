package table_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
)

// evolveSpec replaces the table's partition field remove with add.
func evolveSpec(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, remove, source string, tr iceberg.Transform, add string) {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	txn := tbl.NewTransaction()
	require.NoError(t, txn.UpdateSpec(true).RemoveField(remove).AddField(source, tr, add).Commit())
	_, err = txn.Commit(context.Background())
	require.NoError(t, err)
}

func evolveToMonth(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) {
	evolveSpec(t, cat, ident, "event_date", "event_ts", iceberg.MonthTransform{}, "event_month")
}

// july is 10 orders of every day of July 2026.
func july() []orderdata.Order {
	var out []orderdata.Order
	for d := 1; d <= 31; d++ {
		out = append(out, orderdata.Day(time.Date(2026, 7, d, 0, 0, 0, 0, time.UTC), 10)...)
	}
	return out
}

// A table partitioned by month(event_ts) evolves to day(event_ts).
// Replacing a day must remove that day's rows from the month file written
// under the old spec, and keep the month's other days.
func TestReplacePartitionAfterSpecEvolution(t *testing.T) {
	t.Parallel()
	cat, dir := catalogtest.New(t)
	monthly := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{5}, FieldID: 1000, Name: "event_month", Transform: iceberg.MonthTransform{}})
	ident := catalogtest.CreateTable(t, cat, "orders", orderdata.Schema, monthly, nil)
	_ = dir
	ctx := context.Background()

	w := open(t, cat, ident)
	_, err := w.ReplacePartition(ctx, key(t, w, "event_month=2026-07"), reader(july()))
	require.NoError(t, err)
	august := orderdata.Day(time.Date(2026, 8, 3, 0, 0, 0, 0, time.UTC), 10)
	_, err = w.ReplacePartition(ctx, key(t, w, "event_month=2026-08"), reader(august))
	require.NoError(t, err)

	evolveSpec(t, cat, ident, "event_month", "event_ts", iceberg.DayTransform{}, "event_day")
	w = open(t, cat, ident)
	fresh := orderdata.Day(day0, 3)
	for i := range fresh {
		fresh[i].Amount = 999_999
	}
	res, err := w.ReplacePartition(ctx, key(t, w, "event_day=2026-07-14"), reader(fresh))
	require.NoError(t, err)
	assert.Equal(t, int64(10), res.DeletedRows, "the 14th's 10 old rows")

	scan := string(catalogtest.CanonicalScan(t, cat, ident))
	assert.Equal(t, 31*10-10+3+10, strings.Count(scan, "\n"))
	assert.Equal(t, 3, strings.Count(scan, "|999999|"))
	for _, line := range strings.Split(strings.TrimSpace(scan), "\n") {
		if strings.Contains(line, "2026-07-14") {
			assert.Contains(t, line, "|999999|", "old row of the 14th survived: %s", line)
		}
	}

	// Rerun: same content, no new snapshot.
	again, err := w.ReplacePartition(ctx, key(t, w, "event_day=2026-07-14"), reader(fresh))
	require.NoError(t, err)
	assert.True(t, again.Unchanged)
	assert.Equal(t, scan, string(catalogtest.CanonicalScan(t, cat, ident)))
}
