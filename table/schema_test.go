package table_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/table"
)

func updateSchema(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, f func(u *icetable.UpdateSchema)) {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	txn := tbl.NewTransaction()
	u := txn.UpdateSchema(true, false)
	f(u)
	require.NoError(t, u.Commit())
	_, err = txn.Commit(context.Background())
	require.NoError(t, err)
}

// column returns the values of one column of the canonical scan.
func column(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, name string) []string {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	_, batches, err := tbl.Scan(icetable.WithSelectedFields("order_id", name)).ToArrowRecords(context.Background())
	require.NoError(t, err)
	var out []string
	for rec, err := range batches {
		require.NoError(t, err)
		idx := rec.Schema().FieldIndices(name)[0]
		for i := 0; i < int(rec.NumRows()); i++ {
			out = append(out, rec.Column(idx).ValueStr(i))
		}
		rec.Release()
	}
	return out
}

// Rename currency -> currency_code, then rerun a 2025 partition with a
// producer that still sends "currency": the values land in currency_code.
func TestRenameThenRerunKeepsValues(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	old := day0.AddDate(-1, 0, 0)
	w := open(t, cat, ident)
	replaceDay(t, w, old, 30)
	before := catalogtest.CanonicalScan(t, cat, ident)

	updateSchema(t, cat, ident, func(u *icetable.UpdateSchema) { u.RenameColumn([]string{"currency"}, "currency_code") })
	res := replaceDay(t, open(t, cat, ident, table.WithCodeVersion("after-rename")), old, 30) // input still says "currency"
	assert.Empty(t, res.Ignored, "currency must resolve through the name mapping, not be ignored")
	assert.Equal(t, before, catalogtest.CanonicalScan(t, cat, ident), "no value lost or shifted")
	for _, v := range column(t, cat, ident, "currency_code") {
		assert.Contains(t, []string{"EUR", "USD", "GBP"}, v)
	}

	// The mapping now knows both names, so a second rename still resolves
	// the oldest producer.
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	assert.Contains(t, tbl.Properties()[icetable.DefaultNameMappingKey], `"currency_code"`)
	updateSchema(t, cat, ident, func(u *icetable.UpdateSchema) { u.RenameColumn([]string{"currency_code"}, "ccy") })
	replaceDay(t, open(t, cat, ident, table.WithCodeVersion("after-second-rename")), old, 30)
	assert.Equal(t, before, catalogtest.CanonicalScan(t, cat, ident))
}

// Add a nullable column; rewrite an old partition with code that does not
// know it: null there, other partitions keep their values.
func TestAddColumnThenRewriteOldPartition(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 5)
	require.NoError(t, w.AddColumn(context.Background(), table.NewColumn{Name: "channel", Type: iceberg.PrimitiveTypes.String, Doc: "sales channel"}))

	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	note := tbl.Properties()[table.SchemaChangePrefix+"1"]
	assert.Contains(t, note, "add column channel string")
	assert.Contains(t, note, "by code version unversioned")

	// New code writes the new day with the column.
	newDay := day0.AddDate(0, 0, 1)
	sc := arrow.NewSchema(append(orderdata.ArrowSchema().Fields(), arrow.Field{Name: "channel", Type: arrow.BinaryTypes.String, Nullable: true}), nil)
	base := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(newDay, 4))
	cb := array.NewStringBuilder(memory.DefaultAllocator)
	for range 4 {
		cb.Append("web")
	}
	ch := cb.NewArray()
	rec := array.NewRecordBatch(sc, append(base.Columns(), ch), 4)
	rdr, _ := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	_, err = open(t, cat, ident).ReplacePartition(context.Background(), dayKey(t, w, newDay), rdr)
	require.NoError(t, err)

	// Old code reruns the old day.
	replaceDay(t, open(t, cat, ident, table.WithCodeVersion("old-code")), day0, 5)
	vals := column(t, cat, ident, "channel")
	assert.Equal(t, 4, strings.Count(strings.Join(vals, ","), "web"))
	assert.Equal(t, 5, strings.Count(strings.Join(vals, ","), "(null)"))

	// A reader that ignores the column sees the same rows as before.
	tbl, err = cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	_, batches, err := tbl.Scan(icetable.WithSelectedFields("order_id", "amount_minor")).ToArrowRecords(context.Background())
	require.NoError(t, err)
	n := 0
	for r, err := range batches {
		require.NoError(t, err)
		n += int(r.NumRows())
		r.Release()
	}
	assert.Equal(t, 9, n)
}

func TestAddColumnInitialDefaultNeedsV3(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	err := w.AddColumn(context.Background(), table.NewColumn{Name: "channel", Type: iceberg.PrimitiveTypes.String, InitialDefault: iceberg.NewLiteral("store")})
	assert.ErrorIs(t, err, table.ErrSchemaChange)
}

// withIDs returns f carrying PARQUET:field_id id.
func withIDs(f arrow.Field, id string) arrow.Field {
	f.Metadata = arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{id})
	return f
}

// Input columns in another order and under other names, carrying field
// IDs: resolved by ID.
func TestInputResolvedByFieldID(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	src := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day0, 6))
	defer src.Release()
	f := src.Schema().Fields()
	order := []int{5, 3, 2, 4, 1, 0} // event_date, currency, amount, event_ts, customer, order_id
	var fields []arrow.Field
	var cols []arrow.Array
	for _, i := range order {
		renamed := f[i]
		renamed.Name = "x_" + renamed.Name
		fields = append(fields, withIDs(renamed, []string{"1", "2", "3", "4", "5", "6"}[i]))
		cols = append(cols, src.Column(i))
	}
	sc := arrow.NewSchema(fields, nil)
	rec := array.NewRecordBatch(sc, cols, src.NumRows())
	rdr, _ := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	_, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), rdr)
	require.NoError(t, err)

	want, _ := catalogtest.New(t)
	wantIdent := catalogtest.CreateTable(t, want, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
	replaceDay(t, open(t, want, wantIdent), day0, 6)
	assert.Equal(t, catalogtest.CanonicalScan(t, want, wantIdent), catalogtest.CanonicalScan(t, cat, ident))
}

// The positional trap: a raw Parquet file whose columns are in another
// order. Read by position, amount_minor would receive customer_id; icerun
// resolves by name/ID and writes the right values.
func TestPositionalTrap(t *testing.T) {
	t.Parallel()
	src := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day0, 6))
	defer src.Release()
	f := src.Schema().Fields()
	order := []int{0, 2, 1, 3, 4, 5} // amount_minor before customer_id
	var fields []arrow.Field
	var cols []arrow.Array
	for _, i := range order {
		fields = append(fields, f[i])
		cols = append(cols, src.Column(i))
	}
	swapped := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, src.NumRows())
	var buf bytes.Buffer
	require.NoError(t, pqarrow.WriteTable(array.NewTableFromRecords(swapped.Schema(), []arrow.RecordBatch{swapped}), &buf, 1024, nil, pqarrow.DefaultWriterProps()))

	// Read the raw file back as a reader would.
	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(buf.Bytes()), nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	defer tbl.Release()
	// Positional reading of column 1 as "customer_id" gives amounts: the trap.
	pos := tbl.Column(1).Data().Chunk(0).(*array.Int64)
	assert.Equal(t, int64(100), pos.Value(0), "column 1 of the raw file holds amount_minor")

	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	rdr := array.NewTableReader(tbl, 1024)
	defer rdr.Release()
	_, err = w.ReplacePartition(context.Background(), dayKey(t, w, day0), rdr)
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(catalogtest.CanonicalScan(t, cat, ident))), "\n") {
		cells := strings.Split(line, "|")
		assert.Less(t, len(cells[1]), 3, "customer_id must be small (0..5), got %s", cells[1])
		assert.GreaterOrEqual(t, len(cells[2]), 3, "amount_minor must be >= 100, got %s", cells[2])
	}
}

func TestIncompatibleInputIsTypedErrorAndNoCommit(t *testing.T) {
	t.Parallel()
	src := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day0, 3))
	defer src.Release()
	cases := map[string]arrow.DataType{
		"string where long": arrow.BinaryTypes.String,
		"double where long": arrow.PrimitiveTypes.Float64,
		"list where long":   arrow.ListOf(arrow.PrimitiveTypes.Int64),
	}
	for name, dt := range cases {
		t.Run(name, func(t *testing.T) {
			cat, ident, dir := ordersTable(t)
			w := open(t, cat, ident)
			fields := append([]arrow.Field{}, src.Schema().Fields()...)
			fields[2] = arrow.Field{Name: "amount_minor", Type: dt}
			sc := arrow.NewSchema(fields, nil)
			cols := append([]arrow.Array{}, src.Columns()...)
			cols[2] = array.MakeArrayOfNull(memory.DefaultAllocator, dt, 3)
			rec := array.NewRecordBatch(sc, cols, 3)
			rdr, _ := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
			_, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), rdr)
			require.ErrorIs(t, err, schema.ErrIncompatibleType)
			assert.Contains(t, err.Error(), "amount_minor")
			assert.Equal(t, 0, catalogtest.Snapshots(t, cat, ident))
			assert.Empty(t, catalogtest.DataFiles(t, dir))
		})
	}
}

func withExtraColumn(t *testing.T) array.RecordReader {
	src := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day0, 3))
	sc := arrow.NewSchema(append(src.Schema().Fields(), arrow.Field{Name: "promo_code", Type: arrow.BinaryTypes.String, Nullable: true}), nil)
	extra := array.MakeArrayOfNull(memory.DefaultAllocator, arrow.BinaryTypes.String, 3)
	rec := array.NewRecordBatch(sc, append(src.Columns(), extra), 3)
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	require.NoError(t, err)
	return rdr
}

func TestUnknownFieldsIgnoredAndReported(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	res, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), withExtraColumn(t))
	require.NoError(t, err)
	assert.Equal(t, []string{"promo_code"}, res.Ignored)

	strict := open(t, cat, ident, table.WithUnknownFields(schema.RejectUnknown))
	_, err = strict.ReplacePartition(context.Background(), dayKey(t, w, day0), withExtraColumn(t))
	assert.ErrorIs(t, err, schema.ErrUnknownField)
}

var ordersContract = schema.Contract{Columns: []schema.Column{
	{Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	{Name: "amount_minor", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	{Name: "currency", Type: iceberg.PrimitiveTypes.String, Required: true},
	{Name: "event_ts", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
}}

// A batch missing a required contract field lands in the quarantine table
// with its reason; the target is unchanged; a rerun does not duplicate it.
func TestContractViolationIsQuarantined(t *testing.T) {
	t.Parallel()
	cat, ident, dir := ordersTable(t)
	w := open(t, cat, ident, table.WithContract(ordersContract), table.WithRunID("run-1"))
	replaceDay(t, w, day0, 10)
	scan, files := catalogtest.CanonicalScan(t, cat, ident), catalogtest.DataFiles(t, dir)

	fields := orderdata.ArrowSchema().Fields()
	noCurrency := append(append([]arrow.Field{}, fields[:3]...), fields[4:]...)
	bad := func() array.RecordReader {
		src := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day0, 4))
		cols := append(append([]arrow.Array{}, src.Columns()[:3]...), src.Columns()[4:]...)
		sc := arrow.NewSchema(noCurrency, nil)
		rdr, _ := array.NewRecordReader(sc, []arrow.RecordBatch{array.NewRecordBatch(sc, cols, 4)})
		return rdr
	}
	qident := icetable.Identifier{catalogtest.Namespace, "fact_orders" + table.QuarantineSuffix}
	for run := range 2 {
		_, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), bad())
		require.ErrorIs(t, err, table.ErrQuarantined, "run %d", run)
		require.ErrorIs(t, err, schema.ErrMissingRequired)
		assert.Contains(t, err.Error(), "db.fact_orders_quarantine")
		assert.Contains(t, err.Error(), "currency")
		assert.Equal(t, scan, catalogtest.CanonicalScan(t, cat, ident), "the target must be unchanged")
		q := string(catalogtest.CanonicalScan(t, cat, qident))
		assert.Equal(t, 4, strings.Count(q, "\n"), "run %d: 4 quarantined rows, never duplicated", run)
		assert.Contains(t, q, "run-1")
		assert.Contains(t, q, "currency")
	}
	onDisk := catalogtest.DataFiles(t, dir)
	var target []string
	for _, f := range onDisk {
		if strings.Contains(f, "/fact_orders/") {
			target = append(target, f)
		}
	}
	assert.Equal(t, files, target, "no orphan files in the target table")
	_ = commit.ErrConflict
}

// On a format-v3 table the history default is written as Iceberg's
// initial-default, and partitions of the table are then replaced.
func TestAddColumnInitialDefaultV3(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "orders_v3", orderdata.Schema, orderdata.Spec, iceberg.Properties{"format-version": "3"})
	w := open(t, cat, ident)
	require.NoError(t, w.AddColumn(context.Background(), table.NewColumn{Name: "channel", Type: iceberg.PrimitiveTypes.String, InitialDefault: iceberg.NewLiteral("store")}))
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	f, ok := tbl.Schema().FindFieldByName("channel")
	require.True(t, ok)
	assert.Equal(t, "store", f.InitialDefault)
	assert.Contains(t, tbl.Properties()[table.SchemaChangePrefix+"1"], "initial-default store")

	rows := reader(orderdata.Day(day0, 3))
	defer rows.Release()
	_, err = w.ReplacePartition(context.Background(), dayKey(t, w, day0), rows)
	require.NoError(t, err)
	assert.Equal(t, 1, catalogtest.Snapshots(t, cat, ident))
}
