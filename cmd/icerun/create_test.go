package main

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
)

// withNullCustomer is n orders of day d whose customer_id is null in
// every other row; the file's columns are optional.
func withNullCustomer(d time.Time, n int) arrow.RecordBatch {
	full := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(d, n))
	defer full.Release()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range n {
		if i%2 == 0 {
			b.AppendNull()
		} else {
			b.Append(int64(i))
		}
	}
	cust := b.NewArray()
	defer cust.Release()
	fields := append([]arrow.Field{}, full.Schema().Fields()...)
	for i := range fields {
		fields[i].Nullable = true
	}
	cols := append([]arrow.Array{}, full.Columns()...)
	cols[1] = cust
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n))
}

// A table created from a file with REQUIRED columns (as DuckDB writes
// them) has optional columns, so the next day's nulls load; -required
// keeps a column required, and a null in it is worded as what it is.
func TestCreateOptionalByDefault(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	req := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day, 10)) // order_id ... REQUIRED
	writeRecord(t, filepath.Join(dir, "day1.parquet"), req)
	req.Release()
	nulls := withNullCustomer(day.AddDate(0, 0, 1), 10)
	writeRecord(t, filepath.Join(dir, "day2.parquet"), nulls)
	nulls.Release()

	code, out, errs := icerun("create", "shop.a", "-warehouse", wh, "-schema-from", filepath.Join(dir, "day1.parquet"), "-partition", "event_date")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "2: customer_id: optional long")
	code, _, errs = icerun("replace", "shop.a", "-warehouse", wh, "-key", "event_date=2026-07-15", filepath.Join(dir, "day2.parquet"))
	require.Equal(t, 0, code, errs)

	code, out, errs = icerun("create", "shop.b", "-warehouse", wh, "-schema-from", filepath.Join(dir, "day1.parquet"), "-partition", "event_date", "-required", "order_id,customer_id")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "2: customer_id: required long")
	require.Contains(t, out, "3: amount_minor: optional long")
	code, _, errs = icerun("replace", "shop.b", "-warehouse", wh, "-key", "event_date=2026-07-15", filepath.Join(dir, "day2.parquet"))
	require.Equal(t, exitData, code, errs)
	require.Contains(t, errs, `a null in required column "customer_id"`)
	require.NotContains(t, errs, "missing required column")

	code, _, errs = icerun("create", "shop.c", "-warehouse", wh, "-schema-from", filepath.Join(dir, "day1.parquet"), "-required", "nope")
	require.Equal(t, exitUsage, code, errs)
}

// -schema-from a Hive folder takes the folders' columns too, typed as
// their values are (a date here); format version 3 is offered.
func TestCreateFromHiveFolder(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "events")
	for i := range 2 {
		d := day.AddDate(0, 0, i)
		rec := hiveRecord(d, 5)
		writeRecord(t, filepath.Join(in, "event_date="+d.Format(time.DateOnly), "data_0.parquet"), rec)
		rec.Release()
	}
	code, out, errs := icerun("create", "shop.events", "-warehouse", filepath.Join(dir, "wh"), "-schema-from", in, "-partition", "days(event_ts)", "-format-version", "3")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "event_date: optional date")
	require.Contains(t, out, "(format v3)")
}

// A partition field name an Avro manifest cannot hold (the column
// event-date, identity-partitioned) is refused by create, before any table
// exists, with the rule and a name that would do.
func TestCreateRefusesInvalidPartitionFieldName(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{
		{Name: "event-date", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	}, nil))
	b.Field(0).(*array.Date32Builder).Append(arrow.Date32FromTime(day))
	rec := b.NewRecordBatch()
	b.Release()
	writeRecord(t, filepath.Join(dir, "in.parquet"), rec)
	rec.Release()

	code, _, errs := icerun("create", "shop.a", "-warehouse", wh, "-schema-from", filepath.Join(dir, "in.parquet"), "-partition", "event-date")
	require.Equal(t, exitUsage, code, errs)
	require.Contains(t, errs, "event_date")
	code, _, _ = icerun("describe", "shop.a", "-warehouse", wh)
	require.NotEqual(t, 0, code, "no table was created")
}

// Unsigned columns (DuckDB's UINTEGER, UBIGINT and lists of them) get
// table types that hold every value: uint32 a long, uint64 a
// decimal(20, 0). The files then load, and the largest values read back
// exactly.
func TestCreateFromUnsignedColumns(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Uint32), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Uint32Builder).AppendValues([]uint32{math.MaxUint32, 7}, nil)
	b.Field(1).(*array.Uint64Builder).AppendValues([]uint64{math.MaxUint64, 1 << 63}, nil)
	lb := b.Field(2).(*array.ListBuilder)
	for range 2 {
		lb.Append(true)
		lb.ValueBuilder().(*array.Uint32Builder).Append(math.MaxUint32)
	}
	rec := b.NewRecordBatch()
	writeRecord(t, filepath.Join(dir, "u.parquet"), rec)
	rec.Release()

	code, out, errs := icerun("create", "shop.u", "-warehouse", wh, "-schema-from", filepath.Join(dir, "u.parquet"))
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "u32: optional long")
	require.Contains(t, out, "u64: optional decimal(20, 0)")
	require.Contains(t, out, "list<long>")
	code, _, errs = icerun("replace", "shop.u", "-warehouse", wh, filepath.Join(dir, "u.parquet"))
	require.Equal(t, 0, code, errs)
	rows := tableRows(t, wh, icetable.Identifier{"shop", "u"})
	defer rows.Release()
	require.EqualValues(t, 2, rows.NumRows())
	var got []string
	for _, name := range []string{"u32", "u64", "l"} {
		col := rows.Column(rows.Schema().FieldIndices(name)[0])
		for _, chunk := range col.Data().Chunks() {
			for i := range chunk.Len() {
				got = append(got, chunk.ValueStr(i))
			}
		}
	}
	require.ElementsMatch(t, []string{"4294967295", "7", "18446744073709551615", "9223372036854775808", "[4294967295]", "[4294967295]"}, got)
}

// Nanosecond timestamps (DuckDB's TIMESTAMP_NS): a format v3 table gets a
// timestamp_ns column and keeps every nanosecond; a v2 table gets a
// microsecond column, which loads whole microseconds and refuses a value
// with nanoseconds (exit 65, naming the column) rather than store another
// instant.
func TestCreateFromNanosecondTimestamps(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	file := func(name string, ns ...int64) string {
		sc := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		for _, v := range ns {
			b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(v))
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		path := filepath.Join(dir, name)
		writeRecord(t, path, rec)
		return path
	}
	fine, whole := file("fine.parquet", 1782900000123456789), file("whole.parquet", 1782900000123456000)

	code, out, errs := icerun("create", "shop.v3", "-warehouse", wh, "-schema-from", fine, "-format-version", "3")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "ts: optional timestamp_ns")
	require.NotContains(t, errs, "downcasting")
	code, _, errs = icerun("replace", "shop.v3", "-warehouse", wh, fine)
	require.Equal(t, 0, code, errs)
	rows := tableRows(t, wh, icetable.Identifier{"shop", "v3"})
	defer rows.Release()
	require.EqualValues(t, 1782900000123456789, rows.Column(0).Data().Chunk(0).(*array.Timestamp).Value(0), "every nanosecond kept")

	code, out, errs = icerun("create", "shop.v2", "-warehouse", wh, "-schema-from", fine)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "ts: optional timestamp\n")
	require.NotContains(t, errs, "downcasting")
	code, _, errs = icerun("replace", "shop.v2", "-warehouse", wh, fine)
	require.Equal(t, exitData, code, errs)
	require.Contains(t, errs, `column "ts"`)
	code, _, errs = icerun("replace", "shop.v2", "-warehouse", wh, whole)
	require.Equal(t, 0, code, errs)
}
