package table_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal/catalogtest"
)

// TestReplacePartitionUnchangedOnlyForTheSameRows: a second input that
// differs from the first is never taken for it (Unchanged), even when the
// difference is invisible to a text encoding or was computed to collide
// with icerun's former 64-bit row hash; the same input again is.
func TestReplacePartitionUnchangedOnlyForTheSameRows(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		schema        *iceberg.Schema
		fields        []arrow.Field
		first, second func(b *array.RecordBuilder)
		want          any // the last column's value after the second input
	}{
		{
			name: "invalid UTF-8 in a list",
			schema: iceberg.NewSchema(0,
				iceberg.NestedField{ID: 1, Name: "part", Type: iceberg.PrimitiveTypes.Int64, Required: true},
				iceberg.NestedField{ID: 2, Name: "tags", Type: &iceberg.ListType{ElementID: 3, Element: iceberg.PrimitiveTypes.String, ElementRequired: false}},
			),
			fields: []arrow.Field{{Name: "part", Type: arrow.PrimitiveTypes.Int64}, {Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true}},
			first:  func(b *array.RecordBuilder) { tagRow(b, 1, "caf\xe9") },
			second: func(b *array.RecordBuilder) { tagRow(b, 1, "caf\xe8") },
			want:   "caf\xe8",
		},
		{
			name: "a row computed to collide with the former row hash",
			schema: iceberg.NewSchema(0,
				iceberg.NestedField{ID: 1, Name: "part", Type: iceberg.PrimitiveTypes.Int64, Required: true},
				iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
				iceberg.NestedField{ID: 3, Name: "writer", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			),
			fields: []arrow.Field{{Name: "part", Type: arrow.PrimitiveTypes.Int64}, {Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "writer", Type: arrow.PrimitiveTypes.Int64}},
			first:  func(b *array.RecordBuilder) { longRow(b, 1, 10, 100) },
			second: func(b *array.RecordBuilder) { longRow(b, 1, 11, formerCollision([]int64{1, 10, 100}, []int64{1, 11})) },
			want:   formerCollision([]int64{1, 10, 100}, []int64{1, 11}),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "part", Transform: iceberg.IdentityTransform{}})
			ident := catalogtest.CreateTable(t, cat, "t", tc.schema, spec, nil)
			w := open(t, cat, ident)
			k := key(t, w, "part=1")
			replace := func(fill func(b *array.RecordBuilder)) bool {
				rows := catalogtest.Reader(tc.fields, 1, func(b *array.RecordBuilder, _ int) { fill(b) })
				defer rows.Release()
				res, err := w.ReplacePartition(context.Background(), k, rows)
				require.NoError(t, err)
				return res.Unchanged
			}
			require.False(t, replace(tc.first))
			assert.False(t, replace(tc.second), "a different input was taken for the partition's content")
			assert.Equal(t, tc.want, lastValue(t, cat, ident), "the table must hold the second input")
			assert.True(t, replace(tc.second), "the same input again")
		})
	}
}

func tagRow(b *array.RecordBuilder, part int64, tag string) {
	b.Field(0).(*array.Int64Builder).Append(part)
	lb := b.Field(1).(*array.ListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.StringBuilder).Append(tag)
}

func longRow(b *array.RecordBuilder, vals ...int64) {
	for i, v := range vals {
		b.Field(i).(*array.Int64Builder).Append(v)
	}
}

// lastValue is the first leaf value of the last column of the table's
// only row, read back from its data files: bytes as they are.
func lastValue(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) any {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	at, err := tbl.Scan().ToArrowTable(context.Background())
	require.NoError(t, err)
	defer at.Release()
	require.EqualValues(t, 1, at.NumRows())
	var arr arrow.Array = at.Column(int(at.NumCols()) - 1).Data().Chunk(0)
	for {
		switch a := arr.(type) {
		case *array.List:
			arr = a.ListValues()
		case *array.String:
			return a.Value(0)
		case *array.Int64:
			return a.Value(0)
		default:
			t.Fatalf("unexpected column %s", a.DataType())
		}
	}
}

// formerCollision returns the value v of the last column such that the row
// prefix+[v] had the same hash as row under icerun's former fingerprint
// (all columns int64 without nulls: h = (h ^ mix(v)) * prime per column
// from an FNV offset, then mix(h); both 64-bit sums derived from that
// hash). Every step was invertible, so the collision is computed directly.
func formerCollision(row, prefix []int64) int64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	chain := func(vals []int64) uint64 {
		h := uint64(offset)
		for _, v := range vals {
			h = (h ^ formerMix(uint64(v))) * prime
		}
		return h
	}
	target, h := chain(row), chain(prefix)
	return int64(formerUnmix(target*inverse(prime) ^ h))
}

func formerMix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

func formerUnmix(h uint64) uint64 {
	h ^= h>>31 ^ h>>62
	h *= inverse(0x94d049bb133111eb)
	h ^= h>>27 ^ h>>54
	h *= inverse(0xbf58476d1ce4e5b9)
	h ^= h>>30 ^ h>>60
	return h
}

// inverse is the multiplicative inverse of odd c modulo 2^64.
func inverse(c uint64) uint64 {
	x := c
	for range 6 {
		x *= 2 - c*x
	}
	return x
}
