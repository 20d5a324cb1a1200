package partition

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/uptrace/bun/driver/sqliteshim"
)

// newTable creates a table in a fresh iceberg-go SQL catalog on SQLite.
func newTable(t *testing.T, sch *iceberg.Schema, spec iceberg.PartitionSpec) *icetable.Table {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	dsn := "file:" + filepath.Join(dir, "cat.db")
	db, err := sql.Open(sqliteshim.ShimName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cat, err := sqlcat.NewCatalog("test", db, sqlcat.SQLite, iceberg.Properties{
		"uri":             dsn,
		sqlcat.DialectKey: string(sqlcat.SQLite),
		sqlcat.DriverKey:  sqliteshim.ShimName,
		"warehouse":       "file://" + dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(ctx, icetable.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, icetable.Identifier{"ns", "t"}, sch, catalog.WithPartitionSpec(&spec))
	if err != nil {
		t.Fatal(err)
	}

	return tbl
}

// writeAndReadBack writes rows (JSON) with table.WriteRecords, commits the
// files and returns the partition keys of the written data files and of the
// manifest entries read back, each sorted.
func writeAndReadBack(t *testing.T, tbl *icetable.Table, rows string) (*Spec, []Key, []Key) {
	t.Helper()
	ctx := context.Background()
	spec, err := NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := icetable.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	var written []Key
	var files []iceberg.DataFile
	batches := func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
	for df, err := range icetable.WriteRecords(ctx, tbl, sc, batches) {
		if err != nil {
			t.Fatalf("WriteRecords = %v", err)
		}
		k, err := spec.KeyFromValues(df.Partition())
		if err != nil {
			t.Fatalf("KeyFromValues(written %v) = %v", df.Partition(), err)
		}
		written = append(written, k)
		files = append(files, df)
	}
	tx := tbl.NewTransaction()
	if err := tx.AddDataFiles(ctx, files, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err = tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	var read []Key
	for _, mf := range mfs {
		entries, err := mf.FetchEntries(fs, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			k, err := spec.KeyFromValues(e.DataFile().Partition())
			if err != nil {
				t.Fatalf("KeyFromValues(manifest %v) = %v", e.DataFile().Partition(), err)
			}
			read = append(read, k)
		}
	}
	byText := func(a, b Key) int { return strings.Compare(a.String(), b.String()) }
	slices.SortFunc(written, byText)
	slices.SortFunc(read, byText)

	return spec, written, read
}

// Keys computed from the partition values of files written by iceberg-go,
// and read back from its manifests, equal the parsed keys.
func TestKeysOfWrittenFiles(t *testing.T) {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 3, Name: "d", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 4, Name: "region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 5, Name: "n", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 6, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 7, Name: "amount", Type: iceberg.DecimalTypeOf(10, 2)},
	)
	spec, err := iceberg.NewPartitionSpecOpts(
		iceberg.AddPartitionFieldByName("ts", "event_date", iceberg.DayTransform{}, sch, nil),
		iceberg.AddPartitionFieldByName("d", "d_month", iceberg.MonthTransform{}, sch, nil),
		iceberg.AddPartitionFieldByName("region", "region", iceberg.IdentityTransform{}, sch, nil),
		iceberg.AddPartitionFieldByName("n", "n_bucket", iceberg.BucketTransform{NumBuckets: 8}, sch, nil),
		iceberg.AddPartitionFieldByName("name", "name_trunc", iceberg.TruncateTransform{Width: 3}, sch, nil),
		iceberg.AddPartitionFieldByName("amount", "amount_trunc", iceberg.TruncateTransform{Width: 100}, sch, nil),
	)
	if err != nil {
		t.Fatal(err)
	}
	tbl := newTable(t, sch, spec)
	rows := `[
		{"id":1,"ts":"2026-07-14T10:00:00Z","d":"2026-07-01","region":"eu/west","n":1,"name":"alice","amount":"12.34"},
		{"id":2,"ts":"2026-07-14T23:00:00Z","d":"2026-07-31","region":"eu/west","n":1,"name":"alison","amount":"12.99"},
		{"id":3,"ts":"2026-07-15T00:00:00Z","d":"2026-08-01","region":"null","n":2,"name":"bo","amount":"-0.01"},
		{"id":4,"ts":null,"d":null,"region":null,"n":null,"name":null,"amount":null}
	]`
	b1 := iceberg.BucketTransform{NumBuckets: 8}.Transformer(iceberg.PrimitiveTypes.Int32)(int32(1)).Val
	b2 := iceberg.BucketTransform{NumBuckets: 8}.Transformer(iceberg.PrimitiveTypes.Int32)(int32(2)).Val
	texts := []string{
		fmt.Sprintf("event_date=2026-07-14/d_month=2026-07/region=eu%%2Fwest/n_bucket=%d/name_trunc=ali/amount_trunc=12.00", b1),
		fmt.Sprintf("event_date=2026-07-15/d_month=2026-08/region=%%6Eull/n_bucket=%d/name_trunc=bo/amount_trunc=-1.00", b2),
		"event_date=null/d_month=null/region=null/n_bucket=null/name_trunc=null/amount_trunc=null",
	}
	sp, written, read := writeAndReadBack(t, tbl, rows)
	var want []Key
	for _, s := range texts {
		k, err := sp.Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", s, err)
		}
		want = append(want, k)
	}
	slices.SortFunc(want, func(a, b Key) int { return strings.Compare(a.String(), b.String()) })
	if !slices.Equal(written, want) {
		t.Errorf("keys of written files = %q, want %q", written, want)
	}
	if !slices.Equal(read, want) {
		t.Errorf("keys of manifest entries = %q, want %q", read, want)
	}
}

// Identity partitions of more types survive the manifest round trip.
func TestKeysOfWrittenFilesIdentity(t *testing.T) {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "b", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 2, Name: "l", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 3, Name: "dt", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 4, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 5, Name: "dec", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: 6, Name: "dbl", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 7, Name: "bin", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 8, Name: "ts2", Type: iceberg.PrimitiveTypes.Timestamp},
	)
	var opts []iceberg.PartitionOption
	for _, c := range []string{"b", "l", "dt", "ts", "dec", "dbl", "bin"} {
		opts = append(opts, iceberg.AddPartitionFieldByName(c, c, iceberg.IdentityTransform{}, sch, nil))
	}
	opts = append(opts, iceberg.AddPartitionFieldByName("ts2", "ts2_hour", iceberg.HourTransform{}, sch, nil))
	spec, err := iceberg.NewPartitionSpecOpts(opts...)
	if err != nil {
		t.Fatal(err)
	}
	tbl := newTable(t, sch, spec)
	rows := `[{"b":true,"l":-5,"dt":"2026-07-14","ts":"2026-07-14T10:11:12.123456","dec":"-12.50","dbl":1.5,"bin":"AP8=","ts2":"2026-07-14T10:11:12"}]`
	want := "b=true/l=-5/dt=2026-07-14/ts=2026-07-14T10:11:12.123456/dec=-12.50/dbl=1.5/bin=00ff/ts2_hour=2026-07-14-10"
	_, written, read := writeAndReadBack(t, tbl, rows)
	if len(written) != 1 || written[0].String() != want {
		t.Errorf("keys of written files = %q, want [%q]", written, want)
	}
	if len(read) != 1 || read[0].String() != want {
		t.Errorf("keys of manifest entries = %q, want [%q]", read, want)
	}
}
