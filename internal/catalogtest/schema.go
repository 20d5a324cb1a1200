package catalogtest

import "github.com/apache/iceberg-go"

// PrimitiveSchema has an optional column of every primitive type
// (timestamp_ns needs a format v3 table).
var PrimitiveSchema = iceberg.NewSchema(0,
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
	iceberg.NestedField{ID: 12, Name: "s", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 13, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
	iceberg.NestedField{ID: 14, Name: "bin", Type: iceberg.PrimitiveTypes.Binary},
	iceberg.NestedField{ID: 15, Name: "fx", Type: iceberg.FixedTypeOf(4)},
)
