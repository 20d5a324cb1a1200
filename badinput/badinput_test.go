package badinput_test

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/table"
)

var day0 = time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)

const day0Key = "event_date=2026-07-14"

// kind of fixture table.
type kind int

const (
	orders kind = iota // fact_orders by event_date, day0 holds 40 rows
	labels             // by identity(label): "a" and "x" hold rows
	scores             // by identity(score): 1.5 holds rows
)

// fixture creates the table of kind k with some content.
func fixture(t *testing.T, k kind) (catalog.Catalog, icetable.Identifier, string) {
	t.Helper()
	cat, dir := catalogtest.New(t)
	ctx := context.Background()
	var ident icetable.Identifier
	var fill []struct {
		key  string
		rows array.RecordReader
	}
	switch k {
	case orders:
		ident = catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
		fill = append(fill, struct {
			key  string
			rows array.RecordReader
		}{day0Key, orderdata.Reader(orderdata.Day(day0, 40), 16)})
	case labels:
		ident = catalogtest.CreateTable(t, cat, "labels", labelSchema, labelSpec, nil)
		for _, l := range []string{"a", "x"} {
			fill = append(fill, struct {
				key  string
				rows array.RecordReader
			}{"label=" + l, labelReader(labelled(l, 5))})
		}
	case scores:
		ident = catalogtest.CreateTable(t, cat, "scores", labelSchema, scoreSpec, nil)
		fill = append(fill, struct {
			key  string
			rows array.RecordReader
		}{"score=1.5", labelReader(rowsOf(row{str("a"), num(1.5)}, row{nil, num(1.5)}))})
	}
	w, err := table.Open(ctx, cat, ident)
	require.NoError(t, err)
	for _, f := range fill {
		key, err := w.Key(f.key)
		require.NoError(t, err)
		_, err = w.ReplacePartition(ctx, key, f.rows)
		f.rows.Release()
		require.NoError(t, err)
	}
	return cat, ident, dir
}

// step is what one row does to the table: parse key, replace rows.
type step struct {
	table kind
	key   string // "" for a dynamic replace
	rows  func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) array.RecordReader
	// optional
	ctx  func() (context.Context, context.CancelFunc)
	cat  func(cat catalog.Catalog) catalog.Catalog // the catalog the writer uses
	opts []table.Option
	// setup changes the fixture table before the step, e.g. a property.
	setup func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier)
}

func labelsOf(rs ...row) func(*testing.T, catalog.Catalog, icetable.Identifier) array.RecordReader {
	return func(*testing.T, catalog.Catalog, icetable.Identifier) array.RecordReader { return labelReader(rs) }
}

func ordersOf(os []orderdata.Order) func(*testing.T, catalog.Catalog, icetable.Identifier) array.RecordReader {
	return func(*testing.T, catalog.Catalog, icetable.Identifier) array.RecordReader {
		return orderdata.Reader(os, 16)
	}
}

// ordersWith is 3 orders of day0 with column c (0-based in the orders
// schema) replaced by field f filled by fillCol, or dropped when f is nil.
func ordersWith(c int, f *arrow.Field, fillCol func(b array.Builder, i int)) func(*testing.T, catalog.Catalog, icetable.Identifier) array.RecordReader {
	return func(*testing.T, catalog.Catalog, icetable.Identifier) array.RecordReader {
		src := orderdata.ArrowSchema().Fields()
		var fields []arrow.Field
		for i, fl := range src {
			switch {
			case i != c:
				fields = append(fields, fl)
			case f != nil:
				fields = append(fields, *f)
			}
		}
		os := orderdata.Day(day0, 3)
		return catalogtest.Reader(fields, len(os), func(b *array.RecordBuilder, i int) {
			o, col := os[i], 0
			for j := range src {
				if j == c && f == nil {
					continue
				}
				fb := b.Field(col)
				col++
				if j == c {
					fillCol(fb, i)
					continue
				}
				switch j {
				case 0:
					fb.(*array.Int64Builder).Append(o.ID)
				case 1:
					fb.(*array.Int64Builder).Append(o.Customer)
				case 2:
					fb.(*array.Int64Builder).Append(o.Amount)
				case 3:
					fb.(*array.StringBuilder).Append(o.Currency)
				case 4:
					fb.(*array.TimestampBuilder).Append(arrow.Timestamp(o.EventTime.UnixMicro()))
				case 5:
					fb.(*array.Date32Builder).Append(arrow.Date32FromTime(o.EventTime))
				}
			}
		})
	}
}

var errDisk = errors.New("disk on fire")

func TestBadInput(t *testing.T) {
	long := strings.Repeat("k", table.MaxPathSegment-len("label=")) // the longest folder name allowed
	cases := []struct {
		name string
		step step
		want error
	}{
		{"row outside the key", step{table: orders, key: day0Key, rows: ordersOf(append(orderdata.Day(day0, 5), orderdata.Day(day0.AddDate(0, 0, 1), 1)...))}, partition.ErrRowOutside},
		{"missing required column", step{table: orders, key: day0Key, rows: ordersWith(2, nil, nil)}, schema.ErrMissingRequired},
		{"null in a required column", step{table: orders, key: day0Key, rows: ordersWith(2, &arrow.Field{Name: "amount_minor", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, func(b array.Builder, i int) {
			if i == 1 {
				b.AppendNull()
			} else {
				b.(*array.Int64Builder).Append(7)
			}
		})}, schema.ErrMissingRequired},
		{"string where a long is expected", step{table: orders, key: day0Key, rows: ordersWith(2, &arrow.Field{Name: "amount_minor", Type: arrow.BinaryTypes.String}, func(b array.Builder, i int) {
			b.(*array.StringBuilder).Append("12")
		})}, schema.ErrIncompatibleType},
		{"double where a long is expected (narrowing)", step{table: orders, key: day0Key, rows: ordersWith(2, &arrow.Field{Name: "amount_minor", Type: arrow.PrimitiveTypes.Float64}, func(b array.Builder, i int) {
			b.(*array.Float64Builder).Append(1.25)
		})}, schema.ErrIncompatibleType},
		{"unknown field under RejectUnknown", step{table: orders, key: day0Key, opts: []table.Option{table.WithUnknownFields(schema.RejectUnknown)},
			rows: ordersWith(3, &arrow.Field{Name: "currency_typo", Type: arrow.BinaryTypes.String}, func(b array.Builder, i int) {
				b.(*array.StringBuilder).Append("EUR")
			})}, schema.ErrUnknownField},
		{"NaN key, rows of 1.5", step{table: scores, key: "score=NaN", rows: labelsOf(row{str("a"), num(1.5)})}, partition.ErrRowOutside},
		{"key 1.5, a NaN row", step{table: scores, key: "score=1.5", rows: labelsOf(row{str("a"), num(1.5)}, row{str("b"), num(math.NaN())})}, partition.ErrRowOutside},
		{"null key, non-null rows", step{table: labels, key: "label=null", rows: labelsOf(row{str("a"), nil})}, partition.ErrRowOutside},
		{"key a, a null row", step{table: labels, key: "label=a", rows: labelsOf(row{str("a"), nil}, row{nil, nil})}, partition.ErrRowOutside},
		{"empty-string key, a null row", step{table: labels, key: "label=", rows: labelsOf(row{str(""), nil}, row{nil, nil})}, partition.ErrRowOutside},
		{"key with a bad escape", step{table: labels, key: "label=%zz", rows: labelsOf()}, partition.ErrMalformedKey},
		{"key with an unescaped =", step{table: labels, key: "label=a=b", rows: labelsOf()}, partition.ErrMalformedKey},
		{"key with a raw /", step{table: labels, key: "label=a/b", rows: labelsOf()}, partition.ErrMalformedKey},
		{"traversal key ../../x", step{table: labels, key: "label=..%2F..%2Fx", rows: labelsOf(row{str("../../x"), nil})}, table.ErrUnsafePartitionValue},
		{"traversal value in a dynamic replace", step{table: labels, rows: labelsOf(row{str("ok"), nil}, row{str("a/../../../etc"), nil})}, table.ErrUnsafePartitionValue},
		{"key a-slash-b with rows of a", step{table: labels, key: "label=a%2Fb", rows: labelsOf(row{str("a"), nil})}, partition.ErrRowOutside},
		{"key percent-25 with rows of percent", step{table: labels, key: "label=%2525", rows: labelsOf(row{str("%"), nil})}, partition.ErrRowOutside},
		{"unicode key with rows of its ASCII look-alike", step{table: labels, key: "label=%C3%A9t%C3%A9", rows: labelsOf(row{str("ete"), nil})}, partition.ErrRowOutside},
		{"249-byte key with rows one byte off", step{table: labels, key: "label=" + long, rows: labelsOf(row{str(long[1:] + "j"), nil})}, partition.ErrRowOutside},
		{"folder name over 255 bytes", step{table: labels, key: "label=" + long + "k", rows: labelsOf(row{str(long + "k"), nil})}, table.ErrUnsafePartitionValue},
		{"10 KB key", step{table: labels, key: "label=" + strings.Repeat("k", 10<<10), rows: labelsOf(row{str(strings.Repeat("k", 10<<10)), nil})}, table.ErrUnsafePartitionValue},
		{"unicode value over 255 bytes", step{table: labels, key: "label=" + strings.Repeat("%C3%A9", 125), rows: labelsOf(row{str(strings.Repeat("é", 125)), nil})}, table.ErrUnsafePartitionValue},
		{"folder name over 255 bytes in a dynamic replace", step{table: labels, rows: labelsOf(row{str("ok"), nil}, row{str(long + "k"), nil})}, table.ErrUnsafePartitionValue},
		{"empty value for a date", step{table: orders, key: "event_date=", rows: ordersOf(nil)}, partition.ErrMalformedKey},
		{"impossible date", step{table: orders, key: "event_date=2026-13-45", rows: ordersOf(nil)}, partition.ErrMalformedKey},
		{"unknown partition field", step{table: orders, key: "nope=1", rows: ordersOf(nil)}, partition.ErrMalformedKey},
		{"string id in a dynamic replace", step{table: labels, rows: func(*testing.T, catalog.Catalog, icetable.Identifier) array.RecordReader {
			return catalogtest.Reader([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}, 1, func(b *array.RecordBuilder, i int) { b.Field(0).(*array.StringBuilder).Append("1") })
		}}, schema.ErrIncompatibleType},
		{"reader failing mid-stream", step{table: orders, key: day0Key, rows: func(*testing.T, catalog.Catalog, icetable.Identifier) array.RecordReader {
			return &catalogtest.FailingReader{RecordReader: orderdata.Reader(orderdata.Day(day0, 300), 16), Failure: errDisk}
		}}, errDisk},
		{"cancelled context", step{table: orders, key: day0Key, rows: ordersOf(orderdata.Day(day0, 300)), ctx: func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}}, context.Canceled},
		{"timed-out context", step{table: orders, key: day0Key, rows: ordersOf(orderdata.Day(day0, 300)), ctx: func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		}}, context.DeadlineExceeded},
		{"unreachable catalog", step{table: orders, key: day0Key, rows: ordersOf(orderdata.Day(day0, 30)), cat: func(c catalog.Catalog) catalog.Catalog { return &cutCatalog{Catalog: c} }}, syscall.ECONNREFUSED},
		{"read-only warehouse", step{table: orders, key: day0Key, rows: ordersOf(orderdata.Day(day0, 30)), cat: func(c catalog.Catalog) catalog.Catalog { return readOnlyCatalog{c} }}, fs.ErrPermission},
		{"table dropped between write and commit", step{table: orders, key: day0Key, rows: func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) array.RecordReader {
			return &atEOF{RecordReader: orderdata.Reader(orderdata.Day(day0, 30), 16), fn: func() { require.NoError(t, cat.DropTable(context.Background(), ident)) }}
		}}, commit.ErrTableChanged},
		{"column dropped between write and commit", step{table: orders, key: day0Key, rows: func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) array.RecordReader {
			return &atEOF{RecordReader: orderdata.Reader(orderdata.Day(day0, 30), 16), fn: func() {
				tbl, err := cat.LoadTable(context.Background(), ident)
				require.NoError(t, err)
				txn := tbl.NewTransaction()
				require.NoError(t, txn.UpdateSchema(true, false).DeleteColumn([]string{"currency"}).Commit())
				_, err = txn.Commit(context.Background())
				require.NoError(t, err)
			}}
		}}, commit.ErrTableChanged},
		{"batch with reordered columns midway", step{table: orders, key: day0Key, rows: ordersThen(swapColumns(0, 1))}, schema.ErrIncompatibleType},
		{"string column becoming large_string midway", step{table: orders, key: day0Key, rows: ordersThen(largeStrings(3))}, schema.ErrIncompatibleType},
		{"reordered columns midway in a dynamic replace", step{table: orders, rows: ordersThen(swapColumns(0, 1))}, schema.ErrIncompatibleType},
		{"seconds overflowing microseconds", step{table: orders, key: day0Key, rows: ordersWith(4, &arrow.Field{Name: "event_ts", Type: &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}}, func(b array.Builder, i int) {
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(math.MaxInt64 / 1000 * (int64(i) - 1)))
		})}, schema.ErrIncompatibleType},
		{"write.format.default=orc", step{table: orders, key: day0Key, rows: ordersOf(orderdata.Day(day0, 30)), setup: setProperty(icetable.WriteFormatDefaultKey, "orc")}, commit.ErrUnsupported},
		{"write.format.default=avro", step{table: orders, key: day0Key, rows: ordersOf(orderdata.Day(day0, 30)), setup: setProperty(icetable.WriteFormatDefaultKey, "avro")}, commit.ErrUnsupported},
		{"write.format.default=avro in a dynamic replace", step{table: labels, rows: labelsOf(row{str("a"), nil}), setup: setProperty(icetable.WriteFormatDefaultKey, "AVRO")}, commit.ErrUnsupported},
		{"nil reader", step{table: orders, key: day0Key, rows: func(*testing.T, catalog.Catalog, icetable.Identifier) array.RecordReader { return nil }}, table.ErrNilInput},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cat, ident, dir := fixture(t, tc.step.table)
			if tc.step.setup != nil {
				tc.step.setup(t, cat, ident)
			}
			scan, files := catalogtest.CanonicalScan(t, cat, ident), catalogtest.DataFiles(t, dir)
			snaps := catalogtest.Snapshots(t, cat, ident)
			schemaID := loadSchemaID(t, cat, ident)

			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tc.step.ctx != nil {
				ctx, cancel = tc.step.ctx()
			}
			defer cancel()
			wcat := cat
			if tc.step.cat != nil {
				wcat = tc.step.cat(cat)
			}
			err := func() error {
				w, err := table.Open(context.Background(), wcat, ident, tc.step.opts...)
				if err != nil {
					return err
				}
				rows := tc.step.rows(t, cat, ident)
				if rows != nil {
					defer rows.Release()
				}
				if tc.step.key == "" {
					_, err = w.ReplacePartitions(ctx, rows)
					return err
				}
				key, err := w.Key(tc.step.key)
				if err != nil {
					return err
				}
				_, err = w.ReplacePartition(ctx, key, rows)
				return err
			}()
			require.Error(t, err, "replace succeeded")
			assert.ErrorIs(t, err, tc.want, "replace error = %v, want %v", err, tc.want)
			assert.Equal(t, files, catalogtest.DataFiles(t, dir), "data files on disk changed: orphans or deleted files")
			if ok, _ := cat.CheckTableExists(context.Background(), ident); ok {
				assert.Equal(t, snaps, catalogtest.Snapshots(t, cat, ident), "snapshots")
				if loadSchemaID(t, cat, ident) == schemaID { // else the schema change, not icerun, changed the scan
					assert.Equal(t, string(scan), string(catalogtest.CanonicalScan(t, cat, ident)), "table changed")
				}
			}
		})
	}
	t.Logf("bad-input rows: %d", len(cases))
}

// setProperty sets a table property.
func setProperty(key, value string) func(*testing.T, catalog.Catalog, icetable.Identifier) {
	return func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) {
		t.Helper()
		tbl, err := cat.LoadTable(context.Background(), ident)
		require.NoError(t, err)
		txn := tbl.NewTransaction()
		require.NoError(t, txn.SetProperties(iceberg.Properties{key: value}))
		_, err = txn.Commit(context.Background())
		require.NoError(t, err)
	}
}

func loadSchemaID(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) int {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	return tbl.Schema().ID
}
