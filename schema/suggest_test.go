package schema

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
)

// A missing required column names the nearest unmatched input column.
func TestMissingRequiredSuggestsNearestInput(t *testing.T) {
	tbl := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "event_date", Type: iceberg.PrimitiveTypes.Date, Required: true},
	)
	tests := []struct {
		name  string
		input []string
		want  string
	}{
		{"camel case", []string{"order_id", "eventDate", "note"}, `did you mean input column "eventDate"?`},
		{"typo", []string{"order_id", "event_dat"}, `did you mean input column "event_dat"?`},
		{"nothing near", []string{"order_id", "amount"}, "input columns that match nothing: amount"},
		{"nothing left", []string{"order_id"}, `column "event_date" has no input column`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var fields []arrow.Field
			for _, n := range tc.input {
				typ := arrow.DataType(arrow.PrimitiveTypes.Int64)
				if n != "order_id" {
					typ = arrow.FixedWidthTypes.Date32
				}
				fields = append(fields, arrow.Field{Name: n, Type: typ})
			}
			_, err := Resolve(arrow.NewSchema(fields, nil), tbl, nil, IgnoreUnknown)
			require.ErrorIs(t, err, ErrMissingRequired)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
