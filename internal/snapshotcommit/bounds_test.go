package snapshotcommit_test

import (
	"bytes"
	"cmp"
	"context"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal/catalogtest"
)

// The tests of this file check the partition bounds icerun writes in
// manifest lists (field summaries) and the value bounds of data files,
// decoded with iceberg-go's public readers, against the spec's rules.

// boundsSchema has an id and one column of each type whose partition
// bounds have edge cases: empty strings and byte strings, signed zeros
// and NaN.
var boundsSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "s", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 3, Name: "b", Type: iceberg.PrimitiveTypes.Binary},
	iceberg.NestedField{ID: 4, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
	iceberg.NestedField{ID: 5, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
)

// boundsRow is one row of boundsSchema; a nil pointer is null.
type boundsRow struct {
	s *string
	b []byte // nil is null
	d *float64
	f *float32
}

func boundsReader(rows []boundsRow) array.RecordReader {
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	}
	return catalogtest.Reader(fields, len(rows), func(b *array.RecordBuilder, i int) {
		r := rows[i]
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if r.s != nil {
			b.Field(1).(*array.StringBuilder).Append(*r.s)
		} else {
			b.Field(1).AppendNull()
		}
		if r.b != nil {
			b.Field(2).(*array.BinaryBuilder).Append(r.b)
		} else {
			b.Field(2).AppendNull()
		}
		if r.d != nil {
			b.Field(3).(*array.Float64Builder).Append(*r.d)
		} else {
			b.Field(3).AppendNull()
		}
		if r.f != nil {
			b.Field(4).(*array.Float32Builder).Append(*r.f)
		} else {
			b.Field(4).AppendNull()
		}
	})
}

func ptr[T any](v T) *T { return &v }

func str(s string) boundsRow  { return boundsRow{s: &s} }
func bin(b []byte) boundsRow  { return boundsRow{b: b} }
func dbl(d float64) boundsRow { return boundsRow{d: &d} }
func flt(f float32) boundsRow { return boundsRow{f: &f} }
func identity(id int) iceberg.PartitionField {
	names := map[int]string{2: "s", 3: "b", 4: "d", 5: "f"}
	return iceberg.PartitionField{SourceIDs: []int{id}, FieldID: 1000, Name: names[id], Transform: iceberg.IdentityTransform{}}
}

// TestManifestListBounds writes partitions with edge values, one commit
// per group (8 single-partition commits merge their manifests), and checks
// every manifest of every snapshot against the spec's field summary rules.
func TestManifestListBounds(t *testing.T) {
	negZero := math.Copysign(0, -1)
	keys := func(prefix string, n int) []boundsRow {
		var out []boundsRow
		for i := range n {
			out = append(out, str(prefix+string(rune('0'+i))))
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		field  iceberg.PartitionField
		groups [][]boundsRow // one commit each
	}{
		{"empty string, one commit", identity(2), [][]boundsRow{append([]boundsRow{str("")}, keys("k", 7)...)}},
		{"empty string, merged", identity(2), [][]boundsRow{{str("")}, {str("k0")}, {str("k1")}, {str("k2")}, {str("k3")}, {str("k4")}, {str("k5")}, {str("k6")}}},
		{"empty binary", identity(3), [][]boundsRow{{bin([]byte{}), bin([]byte{1}), bin([]byte{2, 0})}}},
		{"double zeros, +0 first", identity(4), [][]boundsRow{{dbl(0)}, {dbl(negZero)}, {dbl(1)}, {dbl(2)}, {dbl(3)}, {dbl(4)}, {dbl(5)}, {dbl(6)}}},
		{"double zeros, -0 first", identity(4), [][]boundsRow{{dbl(negZero)}, {dbl(0)}, {dbl(-1)}, {dbl(-2)}, {dbl(-3)}, {dbl(-4)}, {dbl(-5)}, {dbl(-6)}}},
		{"double zeros, one commit", identity(4), [][]boundsRow{{dbl(0), dbl(negZero)}}},
		{"double NaN", identity(4), [][]boundsRow{{dbl(math.NaN()), dbl(1.5), boundsRow{}}, {dbl(2.5)}}},
		{"float zeros and NaN", identity(5), [][]boundsRow{{flt(0), flt(float32(negZero)), flt(float32(math.NaN()))}}},
		{"NaN and zeros in data columns", identity(2), [][]boundsRow{{
			{s: ptr("a"), d: ptr(math.NaN()), f: ptr(float32(0))},
			{s: ptr("a"), d: ptr(1.0), f: ptr(float32(negZero))},
			{s: ptr("a"), d: ptr(negZero), b: []byte{}},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cat, _ := catalogtest.New(t)
			ident := catalogtest.CreateTable(t, cat, "bounds", boundsSchema, iceberg.NewPartitionSpec(tc.field), nil)
			w := openWriter(t, cat, ident)
			total := 0
			for _, g := range tc.groups {
				rows := boundsReader(g)
				_, err := w.ReplacePartitions(ctx, rows)
				rows.Release()
				require.NoError(t, err)
				total += len(g)
			}
			tbl := load(t, cat, ident)
			for _, s := range history(t, tbl) {
				for _, mf := range manifests(t, tbl, s) {
					checkFieldSummary(t, tbl, mf)
				}
			}
			for _, e := range liveFiles(t, tbl, tbl.CurrentSnapshot()) {
				checkColumnBounds(t, e.DataFile())
			}
			_, n := scanCount(t, tbl, iceberg.AlwaysTrue{})
			assert.Equal(t, total, n, "rows")
		})
	}
}

// TestManifestListBoundsFilteredScan reproduces a reported defect: after
// "" and k0..k6 are written, iceberg-go's filtered scan of s = 'k3' finds
// the k3 row, and its own overwrite of s = 'k1' removes the old k1 row.
func TestManifestListBoundsFilteredScan(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "bounds", boundsSchema, iceberg.NewPartitionSpec(identity(2)), nil)
	w := openWriter(t, cat, ident)
	for _, v := range []string{"", "k0", "k1", "k2", "k3", "k4", "k5", "k6"} {
		rows := boundsReader([]boundsRow{str(v)})
		_, err := w.ReplacePartitions(ctx, rows)
		rows.Release()
		require.NoError(t, err)
	}
	tbl := load(t, cat, ident)
	_, n := scanCount(t, tbl, iceberg.EqualTo(iceberg.Reference("s"), "k3"))
	assert.Equal(t, 1, n, "rows of s = 'k3'")

	txn := tbl.NewTransaction()
	rows := boundsReader([]boundsRow{str("k1"), str("k1")})
	require.NoError(t, txn.Overwrite(ctx, rows, nil, icetable.WithOverwriteFilter(iceberg.EqualTo(iceberg.Reference("s"), "k1"))))
	rows.Release()
	_, err := txn.Commit(ctx)
	require.NoError(t, err)
	_, n = scanCount(t, load(t, cat, ident), iceberg.AlwaysTrue{})
	assert.Equal(t, 9, n, "rows after iceberg-go overwrote s = 'k1' with 2 rows")
}

// TestManifestListBoundsRepairedWhenKept: a manifest that iceberg-go's own
// append wrote with a null lower bound for "" is kept by icerun's next
// commit with the bound restored, so filtered scans find its partitions.
// On format v3 the kept manifest keeps its first_row_id instead (the
// bound cannot be restored without losing it).
func TestManifestListBoundsRepairedWhenKept(t *testing.T) {
	for _, version := range []string{"2", "3"} {
		t.Run("v"+version, func(t *testing.T) {
			ctx := context.Background()
			cat, _ := catalogtest.New(t)
			ident := catalogtest.CreateTable(t, cat, "bounds", boundsSchema, iceberg.NewPartitionSpec(identity(2)),
				iceberg.Properties{icetable.PropertyFormatVersion: version})
			tbl := load(t, cat, ident)
			txn := tbl.NewTransaction()
			rows := boundsReader([]boundsRow{str(""), str("k0"), str("k1"), str("k2"), str("k3")})
			require.NoError(t, txn.Append(ctx, rows, nil))
			rows.Release()
			_, err := txn.Commit(ctx)
			require.NoError(t, err)
			tbl = load(t, cat, ident)
			_, n := scanCount(t, tbl, iceberg.EqualTo(iceberg.Reference("s"), "k3"))
			require.Equal(t, 0, n, "iceberg-go's own manifest hides k3 (if not, iceberg-go fixed its bounds and this test checks nothing)")
			firstRowID := map[string]*int64{}
			for _, mf := range manifests(t, tbl, tbl.CurrentSnapshot()) {
				firstRowID[mf.FilePath()] = mf.FirstRowID()
			}

			w := openWriter(t, cat, ident)
			rows = boundsReader([]boundsRow{str("z")})
			_, err = w.ReplacePartitions(ctx, rows)
			rows.Release()
			require.NoError(t, err)
			tbl = load(t, cat, ident)
			kept := 0
			for _, mf := range manifests(t, tbl, tbl.CurrentSnapshot()) {
				if before, ok := firstRowID[mf.FilePath()]; ok {
					kept++
					assert.Equal(t, before, mf.FirstRowID(), "first_row_id of kept manifest %s", mf.FilePath())
				}
			}
			require.Equal(t, 1, kept, "manifests kept")
			if version == "3" {
				return
			}
			_, n = scanCount(t, tbl, iceberg.EqualTo(iceberg.Reference("s"), "k3"))
			assert.Equal(t, 1, n, "rows of s = 'k3' after icerun's commit kept the manifest")
			for _, mf := range manifests(t, tbl, tbl.CurrentSnapshot()) {
				checkFieldSummary(t, tbl, mf)
			}
		})
	}
}

// scanCount counts the rows iceberg-go's scan of tbl with filter returns.
func scanCount(t *testing.T, tbl *icetable.Table, filter iceberg.BooleanExpression) (*icetable.Table, int) {
	t.Helper()
	_, batches, err := tbl.Scan(icetable.WithRowFilter(filter)).ToArrowRecords(context.Background())
	require.NoError(t, err)
	n := 0
	for rec, err := range batches {
		require.NoError(t, err)
		n += int(rec.NumRows())
		rec.Release()
	}
	return tbl, n
}

// checkFieldSummary checks the field summaries of data manifest mf
// against its entries (deleted ones included, as writers count them):
// contains_null and contains_nan say whether a null and a NaN are there;
// when a value that is neither is there, both bounds are set (zero-length
// bytes for an empty value, never null), the lower bound is the least of
// those values and the upper the greatest, in Iceberg's order, where -0.0
// is below +0.0; NaN is never a bound.
func checkFieldSummary(t *testing.T, tbl *icetable.Table, mf iceberg.ManifestFile) {
	t.Helper()
	if mf.ManifestContent() != iceberg.ManifestContentData {
		return
	}
	ps := tbl.Metadata().PartitionSpecByID(int(mf.PartitionSpecID()))
	require.NotNil(t, ps)
	fields := ps.PartitionType(tbl.Schema()).FieldList
	sums := mf.Partitions()
	require.Len(t, sums, len(fields), "manifest %s", mf.FilePath())
	es := entries(t, tbl, mf, false)
	for i, pf := range fields {
		sum := sums[i]
		var vals []any
		hasNull, hasNaN := false, false
		for _, e := range es {
			v := e.DataFile().Partition()[pf.ID]
			switch {
			case v == nil:
				hasNull = true
			case isNaN(v):
				hasNaN = true
			default:
				vals = append(vals, v)
			}
		}
		where := mf.FilePath() + " field " + pf.Name
		assert.Equal(t, hasNull, sum.ContainsNull, "contains_null of %s", where)
		require.NotNil(t, sum.ContainsNaN, "contains_nan of %s", where)
		assert.Equal(t, hasNaN, *sum.ContainsNaN, "contains_nan of %s", where)
		if len(vals) == 0 {
			assert.Nil(t, sum.LowerBound, "lower bound of %s without values", where)
			assert.Nil(t, sum.UpperBound, "upper bound of %s without values", where)
			continue
		}
		if !assert.NotNil(t, sum.LowerBound, "lower bound of %s (values %v)", where, vals) ||
			!assert.NotNil(t, sum.UpperBound, "upper bound of %s (values %v)", where, vals) {
			continue
		}
		lo, err := iceberg.LiteralFromBytes(pf.Type, *sum.LowerBound)
		require.NoError(t, err)
		hi, err := iceberg.LiteralFromBytes(pf.Type, *sum.UpperBound)
		require.NoError(t, err)
		least, greatest := vals[0], vals[0]
		for _, v := range vals[1:] {
			if icebergOrder(v, least) < 0 {
				least = v
			}
			if icebergOrder(v, greatest) > 0 {
				greatest = v
			}
		}
		assert.Zero(t, icebergOrder(lo.Any(), least), "lower bound %v of %s, values %v", lo, where, vals)
		assert.Zero(t, icebergOrder(hi.Any(), greatest), "upper bound %v of %s, values %v", hi, where, vals)
	}
}

// checkColumnBounds checks the value bounds of data file f: each present
// bound decodes, is not NaN, and the lower is not above the upper.
// iceberg-go v0.7.0 leaves out a zero-length bound (a column whose least
// value is the empty string): a missing bound is allowed, and readers
// then do not prune on it.
func checkColumnBounds(t *testing.T, f iceberg.DataFile) {
	t.Helper()
	lower, upper := f.LowerBoundValues(), f.UpperBoundValues()
	for id, lb := range lower {
		typ, ok := boundsSchema.FindTypeByID(id)
		require.True(t, ok)
		lo, err := iceberg.LiteralFromBytes(typ, lb)
		require.NoError(t, err)
		assert.False(t, isNaN(lo.Any()), "lower bound of column %d of %s is NaN", id, f.FilePath())
		ub, ok := upper[id]
		if !ok {
			continue
		}
		hi, err := iceberg.LiteralFromBytes(typ, ub)
		require.NoError(t, err)
		assert.False(t, isNaN(hi.Any()), "upper bound of column %d of %s is NaN", id, f.FilePath())
		assert.LessOrEqual(t, icebergOrder(lo.Any(), hi.Any()), 0, "bounds of column %d of %s: %v > %v", id, f.FilePath(), lo, hi)
	}
}

func isNaN(v any) bool {
	f32, ok := v.(float32)
	if ok {
		return f32 != f32
	}
	f64, ok := v.(float64)
	return ok && f64 != f64
}

// icebergOrder orders two values of the test's types as Java Iceberg does
// (Float.compare for floats: -0.0 below +0.0).
func icebergOrder(a, b any) int {
	switch a := a.(type) {
	case string:
		return cmp.Compare(a, b.(string))
	case []byte:
		return bytes.Compare(a, b.([]byte))
	case float64:
		return floatOrder(a, b.(float64))
	case float32:
		return floatOrder(float64(a), float64(b.(float32)))
	case int64:
		return cmp.Compare(a, b.(int64))
	}
	panic("icebergOrder: unexpected type")
}

func floatOrder(a, b float64) int {
	if c := cmp.Compare(a, b); c != 0 {
		return c
	}
	return cmp.Compare(boolInt(!math.Signbit(a)), boolInt(!math.Signbit(b)))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
