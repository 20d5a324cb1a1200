package partition

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// RowKeys gives a row whose values equal the previous row's that row's
// key, and every other row its own: runs of equal values, values equal as
// numbers but not as text (-0.0 and 0.0), NaN, and nulls beside values.
func TestRowKeysRuns(t *testing.T) {
	for _, c := range []struct {
		name string
		typ  iceberg.Type
		at   arrow.DataType
		rows string
		want []string
	}{
		{"long runs", iceberg.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64, `[1, 1, 2, 2, 1, null, null, 1]`,
			[]string{"c=1", "c=1", "c=2", "c=2", "c=1", "c=null", "c=null", "c=1"}},
		{"date runs", iceberg.PrimitiveTypes.Date, arrow.FixedWidthTypes.Date32, `[0, 0, 1, null, 1]`,
			[]string{"c=1970-01-01", "c=1970-01-01", "c=1970-01-02", "c=null", "c=1970-01-02"}},
		{"string runs", iceberg.PrimitiveTypes.String, arrow.BinaryTypes.String, `["a", "a", "", null, "", "b"]`,
			[]string{"c=a", "c=a", "c=", "c=null", "c=", "c=b"}},
		{"timestamp runs", iceberg.PrimitiveTypes.Timestamp, &arrow.TimestampType{Unit: arrow.Microsecond}, `[0, 0, 1, null, null, 1]`,
			[]string{"c=1970-01-01T00:00:00.000000", "c=1970-01-01T00:00:00.000000", "c=1970-01-01T00:00:00.000001", "c=null", "c=null", "c=1970-01-01T00:00:00.000001"}},
		{"signed zeros", iceberg.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float64, `[0.0, -0.0, -0.0, 0.0]`,
			[]string{"c=0", "c=-0", "c=-0", "c=0"}},
		{"NaN", iceberg.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float64, `["NaN", "NaN", 1.5]`,
			[]string{"c=NaN", "c=NaN", "c=1.5"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sch := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "c", Type: c.typ})
			spec, err := NewSpec(iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "c", Transform: iceberg.IdentityTransform{}}), sch)
			if err != nil {
				t.Fatal(err)
			}
			arr, _, err := array.FromJSON(memory.DefaultAllocator, c.at, strings.NewReader(c.rows))
			if err != nil {
				t.Fatal(err)
			}
			defer arr.Release()
			md := arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"1"})
			rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "c", Type: c.at, Nullable: true, Metadata: md}}, nil), []arrow.Array{arr}, int64(arr.Len()))
			defer rec.Release()
			keys, rowKey, err := spec.RowKeys(rec)
			if err != nil {
				t.Fatal(err)
			}
			for r, want := range c.want {
				if got := keys[rowKey[r]].String(); got != want {
					t.Errorf("row %d: key %q, want %q", r, got, want)
				}
			}
		})
	}
}
