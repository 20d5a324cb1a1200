package partition

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
)

// Key errors list the spec's fields and the form of a key.
func TestKeyErrorsListTheFields(t *testing.T) {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "event_date", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	)
	ps := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "event_date", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 8}},
	)
	spec, err := NewSpec(ps, sch)
	require.NoError(t, err)
	for _, text := range []string{"event_dat=2026-07-14/id_bucket=1", "2026-07-14"} {
		_, err := spec.Parse(text)
		require.ErrorIs(t, err, ErrMalformedKey)
		require.Contains(t, err.Error(), "the spec's fields are event_date (date), id_bucket (int); write event_date=VALUE/id_bucket=VALUE")
	}
}
