//go:build interop

package interop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/table"
)

// pf is a partition field on column name of cols.
func pf(cols []col, name string, tr iceberg.Transform, id int) iceberg.PartitionField {
	for i, c := range cols {
		if c.name == name {
			return iceberg.PartitionField{SourceIDs: []int{i + 1}, FieldID: 1000 + id, Name: fmt.Sprintf("p%d_%s", id, name), Transform: tr}
		}
	}
	panic("no column " + name)
}

// specCase is one partition spec of the transform matrix: each field a
// (column, transform).
type specCase struct {
	name   string
	fields []struct {
		col string
		tr  iceberg.Transform
	}
}

func spec1(col string, tr iceberg.Transform) specCase {
	return specN(tr.String()+"_"+col, col, tr)
}

func specN(name string, colTr ...any) specCase {
	sc := specCase{name: name}
	for i := 0; i < len(colTr); i += 2 {
		sc.fields = append(sc.fields, struct {
			col string
			tr  iceberg.Transform
		}{colTr[i].(string), colTr[i+1].(iceberg.Transform)})
	}
	return sc
}

// transformMatrix: identity of every primitive type, every time
// transform, bucket, truncate, void, multi-field specs.
func transformMatrix() []specCase {
	var out []specCase
	for _, c := range primitiveCols {
		out = append(out, spec1(c.name, iceberg.IdentityTransform{}))
	}
	out = append(out,
		spec1("ts", iceberg.YearTransform{}), spec1("ts", iceberg.MonthTransform{}), spec1("ts", iceberg.DayTransform{}), spec1("ts", iceberg.HourTransform{}),
		spec1("tstz", iceberg.DayTransform{}), spec1("tstz", iceberg.HourTransform{}),
		spec1("dt", iceberg.YearTransform{}), spec1("dt", iceberg.MonthTransform{}), spec1("dt", iceberg.DayTransform{}),
		spec1("l", iceberg.BucketTransform{NumBuckets: 8}), spec1("i", iceberg.BucketTransform{NumBuckets: 4}),
		spec1("s", iceberg.BucketTransform{NumBuckets: 4}), spec1("dec", iceberg.BucketTransform{NumBuckets: 4}),
		spec1("u", iceberg.BucketTransform{NumBuckets: 4}), spec1("bin", iceberg.BucketTransform{NumBuckets: 4}),
		spec1("dt", iceberg.BucketTransform{NumBuckets: 4}), spec1("ts", iceberg.BucketTransform{NumBuckets: 4}),
		spec1("s", iceberg.TruncateTransform{Width: 3}), spec1("l", iceberg.TruncateTransform{Width: 10}),
		spec1("i", iceberg.TruncateTransform{Width: 10}), spec1("dec", iceberg.TruncateTransform{Width: 100}),
		spec1("bin", iceberg.TruncateTransform{Width: 1}),
		spec1("i", iceberg.VoidTransform{}),
		specN("multi_day_s_bucket", "ts", iceberg.DayTransform{}, "s", iceberg.IdentityTransform{}, "l", iceberg.BucketTransform{NumBuckets: 4}),
		specN("multi_b_f_month", "b", iceberg.IdentityTransform{}, "f", iceberg.IdentityTransform{}, "tstz", iceberg.MonthTransform{}),
	)
	return out
}

// query is one filtered read: the same predicate in Spark SQL and in
// PyIceberg, and the rows it must return.
type query struct {
	what      string
	spark     string // the WHERE clause
	py        Expr
	want      []Row
	sparkWant []Row // when Spark's answer differs from want by Java's semantics (nil: want)
}

// columnQueries are, for every distinct value v of column c in rows,
// WHERE c = v (IS NULL, NaN), and for a time transform a range query per
// partition.
func columnQueries(c col, tr iceberg.Transform, rows []Row) []query {
	var out []query
	seen := map[string]bool{}
	for _, r := range rows {
		v := r[c.name].(string)
		if seen[v] {
			continue
		}
		seen[v] = true
		q := query{what: fmt.Sprintf("%s = %.40s", c.name, v)}
		switch {
		case v == "null":
			q.spark, q.py = c.name+" IS NULL", IsNull(c.name)
		case v == "f:NaN":
			q.spark, q.py = "isnan("+c.name+")", IsNaN(c.name)
		case c.ice.Equals(iceberg.PrimitiveTypes.UUID):
			// Not compared: PyIceberg 0.12 cannot filter rows of a uuid
			// column (pyarrow has no 'equal' kernel for its uuid extension
			// type), and Java Iceberg 1.12 compares uuid bounds as signed
			// longs (apache/iceberg#14216) where the spec, Parquet and
			// iceberg-go order them as unsigned bytes: Spark prunes the
			// manifests icerun writes for uuid = v. Full scans still read
			// every uuid.
			continue
		default:
			q.spark, q.py = c.name+" = "+sparkLiteral(c.ice, v), Cmp(c.name, "eq", v)
		}
		if _, ok := tr.(iceberg.TruncateTransform); ok && (v == "i:-2147483648" || v == "i:-9223372036854775808") {
			// truncate of an int/long minimum wraps to the top of the range
			// in Java and iceberg-go (the partition value icerun writes);
			// PyIceberg 0.12 projects c = min with Python's unbounded ints,
			// to a value below the minimum, and prunes the partition: only
			// Spark is compared.
			q.py = nil
		}
		q.want = filterRows(rows, func(r Row) bool { return sameValue(r[c.name].(string), v) })
		if float := c.ice.Equals(iceberg.PrimitiveTypes.Float32) || c.ice.Equals(iceberg.PrimitiveTypes.Float64); float {
			if _, ok := tr.(iceberg.IdentityTransform); ok && (v == "f:0000000000000000" || v == "f:8000000000000000") {
				// Java Iceberg evaluates c = 0.0 on identity partitions with
				// Float.compare / Double.compare, which orders -0.0 below
				// +0.0: Spark returns the rows of the literal's own sign
				// (the spec keeps -0.0 and +0.0 as two partitions).
				q.sparkWant = filterRows(rows, func(r Row) bool { return r[c.name].(string) == v })
			}
			if v != "f:0000000000000000" && v != "f:8000000000000000" {
				// Not compared: PyIceberg 0.12 returns no rows for
				// d = 0.1 or d = 1e300 (double) and f = 0.1 or f = +Inf
				// (float) on identity partitions of tables it wrote
				// itself too (create, append, EqualTo); Spark returns
				// them, and PyIceberg's full scans read them.
				q.py = nil
			}
		}
		out = append(out, q)
		if lo, hi, ok := period(tr, v); ok {
			in := func(r Row) bool {
				n, ok := micro(r[c.name].(string))
				return ok && n >= lo && n < hi
			}
			loV, hiV := typedTime(c, lo), typedTime(c, hi)
			out = append(out, query{
				what:  fmt.Sprintf("%s in %s of %s", c.name, tr, v),
				spark: fmt.Sprintf("%s >= %s AND %s < %s", c.name, sparkLiteral(c.ice, loV), c.name, sparkLiteral(c.ice, hiV)),
				py:    And(Cmp(c.name, "ge", loV), Cmp(c.name, "lt", hiV)),
				want:  filterRows(rows, in),
			})
		}
	}
	return out
}

// sameValue is SQL equality of two typed values: -0.0 equals +0.0.
func sameValue(a, b string) bool {
	if a == b {
		return true
	}
	if strings.HasPrefix(a, "f:") && strings.HasPrefix(b, "f:") && a != "f:NaN" && b != "f:NaN" {
		return floatOf(a) == floatOf(b)
	}
	return false
}

func filterRows(rows []Row, keep func(Row) bool) []Row {
	var out []Row
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// micro is a typed date or timestamp as microseconds since the epoch.
func micro(v string) (int64, bool) {
	tag, body, _ := strings.Cut(v, ":")
	n, err := strconv.ParseInt(body, 10, 64)
	switch {
	case err != nil:
		return 0, false
	case tag == "ts":
		return n, true
	case tag == "date":
		return n * 86400e6, true
	}
	return 0, false
}

// typedTime is micros n as a typed value of column c's type.
func typedTime(c col, n int64) string {
	if c.ice.Equals(iceberg.PrimitiveTypes.Date) {
		return "date:" + strconv.FormatInt(n/86400e6, 10)
	}
	return "ts:" + strconv.FormatInt(n, 10)
}

// period is the [lo, hi) in micros of the time-transform partition of v.
func period(tr iceberg.Transform, v string) (lo, hi int64, ok bool) {
	n, ok := micro(v)
	if !ok {
		return 0, 0, false
	}
	t := time.UnixMicro(n).UTC()
	var a, b time.Time
	switch tr.(type) {
	case iceberg.YearTransform:
		a = time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
		b = a.AddDate(1, 0, 0)
	case iceberg.MonthTransform:
		a = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		b = a.AddDate(0, 1, 0)
	case iceberg.DayTransform:
		a = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		b = a.AddDate(0, 0, 1)
	case iceberg.HourTransform:
		a = t.Truncate(time.Hour)
		b = a.Add(time.Hour)
	default:
		return 0, 0, false
	}
	return a.UnixMicro(), b.UnixMicro(), true
}

// checkQueries runs every query in Spark and PyIceberg, plus full scans
// and COUNT(*), in one batch, and compares each with its rows.
func checkQueries(t *testing.T, e *Engines, c *Catalog, name string, want []Row, qs []query) {
	t.Helper()
	reqs := []Request{
		SparkSQL("SELECT * FROM " + c.Spark(name)),
		PyIcebergScan(c.Name, c.Py(name), Scan{}),
		SparkSQL("SELECT COUNT(*) AS n FROM " + c.Spark(name)),
	}
	for _, q := range qs {
		py := PyIcebergScan(c.Name, c.Py(name), Scan{Where: q.py})
		if q.py == nil {
			py = Request{"op": "ping"}
		}
		reqs = append(reqs, SparkSQL(fmt.Sprintf("SELECT * FROM %s WHERE %s", c.Spark(name), q.spark)), py)
	}
	res, err := e.TryBatch(reqs)
	if err != nil {
		t.Fatal(err)
	}
	SameRows(t, name+": spark full scan", want, res[0].Named())
	SameRows(t, name+": pyiceberg full scan", want, res[1].Named())
	if n := res[2].Named()[0].Int("n"); n != int64(len(want)) {
		t.Errorf("%s: spark COUNT(*) = %d, want %d", name, n, len(want))
	}
	for i, q := range qs {
		sparkWant := q.want
		if q.sparkWant != nil {
			sparkWant = q.sparkWant
		}
		SameRows(t, name+": spark WHERE "+q.what, sparkWant, res[3+2*i].Named())
		if q.py != nil {
			SameRows(t, name+": pyiceberg "+q.what, q.want, res[4+2*i].Named())
		}
	}
	stats.add(1, len(reqs))
}

// TestTransforms writes the primitive table under every spec of the
// transform matrix with icerun and reads every partition back with
// filtered queries in Spark and PyIceberg.
func TestTransforms(t *testing.T) {
	e := Get(t)
	c := e.NewCatalog(t, lastTarget())
	ctx := context.Background()
	sch := primitiveSchema(primitiveCols)
	in := primitiveBatch(primitiveCols, primitiveRows, 0)
	want := RowsOf(in)
	for i, sc := range transformMatrix() {
		t.Run(sc.name, func(t *testing.T) {
			var fields []iceberg.PartitionField
			for j, f := range sc.fields {
				fields = append(fields, pf(primitiveCols, f.col, f.tr, j))
			}
			name := fmt.Sprintf("t%02d_%s", i, strings.NewReplacer("[", "", "]", "").Replace(sc.name))
			data, rows := in, want
			if slices.ContainsFunc(sc.fields, func(f struct {
				col string
				tr  iceberg.Transform
			}) bool {
				return f.col == "s" && f.tr.Equals(iceberg.IdentityTransform{})
			}) {
				// A 10 KB identity value cannot be a folder name (NAME_MAX
				// is 255 on most file systems; iceberg-go v0.7.0 puts the
				// partition path in every data file's path, even in the
				// object-store layout), so these tables get a 240-byte one.
				data = primitiveBatch(shortStrings(primitiveCols), primitiveRows, 0)
				rows = RowsOf(data)
			}
			c.CreateTable(t, name, sch, iceberg.NewPartitionSpec(fields...), iceberg.Properties{"format-version": "2"})
			w := open(t, c, name)
			_, err := w.ReplacePartitions(ctx, reader(t, data))
			if errors.Is(err, table.ErrSharedPartitionPath) {
				// A null string and the string "null" share the folder
				// s=null, which iceberg-go's partitioned writer would put
				// into one file: icerun refuses the input, so the rows
				// with the string "null" go in a call of their own.
				rest, strs := splitNullString(t, data)
				_, err = w.ReplacePartitions(ctx, reader(t, rest))
				if err == nil {
					_, err = w.ReplacePartitions(ctx, reader(t, strs))
				}
			}
			if errors.Is(err, commit.ErrUnsupported) && slices.ContainsFunc(sc.fields, func(f struct {
				col string
				tr  iceberg.Transform
			}) bool {
				return f.col == "fx" && f.tr.Equals(iceberg.IdentityTransform{})
			}) {
				// iceberg-go v0.7.0 writes fixed partition values in a form
				// Java cannot decode: icerun refuses such a spec.
				t.Logf("refused, as it must be: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var qs []query
			for _, f := range sc.fields {
				ci := slices.IndexFunc(primitiveCols, func(x col) bool { return x.name == f.col })
				qs = append(qs, columnQueries(primitiveCols[ci], f.tr, rows)...)
			}
			checkQueries(t, e, c, name, rows, qs)
		})
	}
}

// shortStrings is cols with the 10 KB string replaced by a 240-byte one.
func shortStrings(cols []col) []col {
	out := slices.Clone(cols)
	for i, c := range out {
		if c.name == "s" {
			c.values = slices.Clone(c.values)
			c.values[slices.Index(c.values, any(long))] = strings.Repeat("x", 240)
			out[i] = c
		}
	}
	return out
}

// TestTimeColumn: identity and bucket partitions of a time column, read by
// PyIceberg (Spark does not read Iceberg time columns).
func TestTimeColumn(t *testing.T) {
	e := Get(t)
	c := e.NewCatalog(t, lastTarget())
	cols := []col{timeCol, primitiveCols[slices.IndexFunc(primitiveCols, func(x col) bool { return x.name == "l" })]}
	in := primitiveBatch(cols, 24, 0)
	want := RowsOf(in)
	for i, tr := range []iceberg.Transform{iceberg.IdentityTransform{}, iceberg.BucketTransform{NumBuckets: 4}} {
		name := fmt.Sprintf("time%d", i)
		c.CreateTable(t, name, primitiveSchema(cols), iceberg.NewPartitionSpec(pf(cols, "t", tr, 0)), iceberg.Properties{"format-version": "2"})
		if _, err := open(t, c, name).ReplacePartitions(context.Background(), reader(t, in)); err != nil {
			t.Fatal(err)
		}
		qs := columnQueries(timeCol, tr, want)
		reqs := []Request{PyIcebergScan(c.Name, c.Py(name), Scan{})}
		for _, q := range qs {
			reqs = append(reqs, PyIcebergScan(c.Name, c.Py(name), Scan{Where: q.py}))
		}
		res, err := e.TryBatch(reqs)
		if err != nil {
			t.Fatal(err)
		}
		SameRows(t, name+": pyiceberg full scan", want, res[0].Named())
		for j, q := range qs {
			SameRows(t, name+": pyiceberg "+q.what, q.want, res[1+j].Named())
		}
		stats.add(1, len(reqs))
	}
}

// splitNullString splits rec into its rows whose column s is not the
// string "null" and those whose s is.
func splitNullString(t *testing.T, rec arrow.RecordBatch) (rest, strs arrow.RecordBatch) {
	t.Helper()
	col := rec.Column(rec.Schema().FieldIndices("s")[0]).(*array.String)
	is, isNot := array.NewBooleanBuilder(memory.DefaultAllocator), array.NewBooleanBuilder(memory.DefaultAllocator)
	defer is.Release()
	defer isNot.Release()
	for i := 0; i < col.Len(); i++ {
		v := col.IsValid(i) && col.Value(i) == "null"
		is.Append(v)
		isNot.Append(!v)
	}
	filter := func(b *array.BooleanBuilder) arrow.RecordBatch {
		mask := b.NewArray()
		defer mask.Release()
		out, err := compute.FilterRecordBatch(context.Background(), rec, mask, compute.DefaultFilterOptions())
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	return filter(isNot), filter(is)
}
