package partition

import (
	"testing"

	"github.com/apache/iceberg-go"
)

// testSchema has a column of every primitive type.
var testSchema = iceberg.NewSchema(1,
	iceberg.NestedField{ID: 1, Name: "b", Type: iceberg.PrimitiveTypes.Bool},
	iceberg.NestedField{ID: 2, Name: "i", Type: iceberg.PrimitiveTypes.Int32},
	iceberg.NestedField{ID: 3, Name: "l", Type: iceberg.PrimitiveTypes.Int64},
	iceberg.NestedField{ID: 4, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
	iceberg.NestedField{ID: 5, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
	iceberg.NestedField{ID: 6, Name: "dec", Type: iceberg.DecimalTypeOf(9, 2)},
	iceberg.NestedField{ID: 7, Name: "dt", Type: iceberg.PrimitiveTypes.Date},
	iceberg.NestedField{ID: 8, Name: "t", Type: iceberg.PrimitiveTypes.Time},
	iceberg.NestedField{ID: 9, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
	iceberg.NestedField{ID: 10, Name: "tstz", Type: iceberg.PrimitiveTypes.TimestampTz},
	iceberg.NestedField{ID: 11, Name: "tsns", Type: iceberg.PrimitiveTypes.TimestampNs},
	iceberg.NestedField{ID: 12, Name: "tstzns", Type: iceberg.PrimitiveTypes.TimestampTzNs},
	iceberg.NestedField{ID: 13, Name: "s", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 14, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
	iceberg.NestedField{ID: 15, Name: "fx", Type: iceberg.FixedTypeOf(4)},
	iceberg.NestedField{ID: 16, Name: "bin", Type: iceberg.PrimitiveTypes.Binary},
	iceberg.NestedField{ID: 17, Name: "st", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
		{ID: 18, Name: "inner", Type: iceberg.PrimitiveTypes.String},
	}}},
	iceberg.NestedField{ID: 19, Name: "dec0", Type: iceberg.DecimalTypeOf(38, 0)},
)

// pf is one partition field of a test spec.
type pf struct {
	source int
	name   string
	tr     iceberg.Transform
}

// testFields are single-field specs by partition field name.
var testFields = []pf{
	{1, "b", iceberg.IdentityTransform{}},
	{2, "i", iceberg.IdentityTransform{}},
	{3, "l", iceberg.IdentityTransform{}},
	{4, "f", iceberg.IdentityTransform{}},
	{5, "d", iceberg.IdentityTransform{}},
	{6, "dec", iceberg.IdentityTransform{}},
	{7, "dt", iceberg.IdentityTransform{}},
	{8, "t", iceberg.IdentityTransform{}},
	{9, "ts", iceberg.IdentityTransform{}},
	{10, "tstz", iceberg.IdentityTransform{}},
	{11, "tsns", iceberg.IdentityTransform{}},
	{12, "tstzns", iceberg.IdentityTransform{}},
	{13, "s", iceberg.IdentityTransform{}},
	{14, "u", iceberg.IdentityTransform{}},
	{15, "fx", iceberg.IdentityTransform{}},
	{16, "bin", iceberg.IdentityTransform{}},
	{18, "inner", iceberg.IdentityTransform{}},
	{19, "dec0", iceberg.IdentityTransform{}},
	{9, "ts_year", iceberg.YearTransform{}},
	{9, "ts_month", iceberg.MonthTransform{}},
	{9, "ts_day", iceberg.DayTransform{}},
	{9, "ts_hour", iceberg.HourTransform{}},
	{7, "dt_year", iceberg.YearTransform{}},
	{7, "dt_month", iceberg.MonthTransform{}},
	{7, "dt_day", iceberg.DayTransform{}},
	{10, "tstz_day", iceberg.DayTransform{}},
	{11, "tsns_hour", iceberg.HourTransform{}},
	{12, "tstzns_month", iceberg.MonthTransform{}},
	{13, "s_bucket", iceberg.BucketTransform{NumBuckets: 16}},
	{2, "i_bucket", iceberg.BucketTransform{NumBuckets: 16}},
	{14, "u_bucket", iceberg.BucketTransform{NumBuckets: 4}},
	{2, "i_trunc", iceberg.TruncateTransform{Width: 10}},
	{3, "l_trunc", iceberg.TruncateTransform{Width: 1000}},
	{6, "dec_trunc", iceberg.TruncateTransform{Width: 100}},
	{13, "s_trunc", iceberg.TruncateTransform{Width: 3}},
	{16, "bin_trunc", iceberg.TruncateTransform{Width: 2}},
	{13, "v", iceberg.VoidTransform{}},
}

// newTestSpec compiles a spec of fields (ids from 1000) with spec id id.
func newTestSpec(t testing.TB, id int, fields ...pf) *Spec {
	t.Helper()
	var pfs []iceberg.PartitionField
	for i, f := range fields {
		pfs = append(pfs, iceberg.PartitionField{SourceIDs: []int{f.source}, FieldID: 1000 + i, Name: f.name, Transform: f.tr})
	}
	s, err := NewSpec(iceberg.NewPartitionSpecID(id, pfs...), testSchema)
	if err != nil {
		t.Fatalf("NewSpec(%v) = %v", fields, err)
	}

	return s
}

// fieldSpec is the single-field spec of testFields named name.
func fieldSpec(t testing.TB, name string) *Spec {
	t.Helper()
	for _, f := range testFields {
		if f.name == name {
			return newTestSpec(t, 0, f)
		}
	}
	t.Fatalf("no test field %q", name)

	return nil
}
