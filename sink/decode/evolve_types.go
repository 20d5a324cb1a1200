package decode

import (
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/hamba/avro/v2"
)

// icebergType is the Iceberg type of a new column for Avro values of type
// w: a union of null and one type is that type (the column is optional
// anyway); other unions have none. Field ids are placeholders: the table
// assigns its own.
func icebergType(w avro.Schema) (iceberg.Type, error) {
	ids := 0
	return icebergTypeOf(w, &ids, 0)
}

func icebergTypeOf(w avro.Schema, ids *int, depth int) (iceberg.Type, error) {
	if depth > 32 {
		return nil, fmt.Errorf("Avro type %s nests too deep (recursive?)", w)
	}
	next := func() int { *ids++; return *ids }
	switch w := deref(w).(type) {
	case *avro.UnionSchema:
		var only avro.Schema
		for _, t := range w.Types() {
			if t.Type() == avro.Null {
				continue
			}
			if only != nil {
				return nil, fmt.Errorf("Avro union %s has no single Iceberg type", w)
			}
			only = t
		}
		if only == nil {
			return nil, fmt.Errorf("Avro union %s holds null only", w)
		}
		return icebergTypeOf(only, ids, depth+1)
	case *avro.RecordSchema:
		st := &iceberg.StructType{}
		for _, f := range w.Fields() {
			t, err := icebergTypeOf(f.Type(), ids, depth+1)
			if err != nil {
				return nil, err
			}
			st.FieldList = append(st.FieldList, iceberg.NestedField{ID: next(), Name: f.Name(), Type: t})
		}
		if len(st.FieldList) == 0 {
			return nil, fmt.Errorf("Avro record %s has no field", w.FullName())
		}
		return st, nil
	case *avro.ArraySchema:
		t, err := icebergTypeOf(w.Items(), ids, depth+1)
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{ElementID: next(), Element: t}, nil
	case *avro.MapSchema:
		t, err := icebergTypeOf(w.Values(), ids, depth+1)
		if err != nil {
			return nil, err
		}
		return &iceberg.MapType{KeyID: next(), KeyType: iceberg.PrimitiveTypes.String, ValueID: next(), ValueType: t}, nil
	case *avro.EnumSchema:
		return iceberg.PrimitiveTypes.String, nil
	case *avro.FixedSchema:
		switch logicalOf(w) {
		case avro.Decimal:
			d := w.Logical().(*avro.DecimalLogicalSchema)
			return iceberg.DecimalTypeOf(d.Precision(), d.Scale()), nil
		case avro.UUID:
			return iceberg.PrimitiveTypes.UUID, nil
		}
		return iceberg.FixedTypeOf(w.Size()), nil
	case *avro.PrimitiveSchema:
		switch logicalOf(w) {
		case avro.Date:
			return iceberg.PrimitiveTypes.Date, nil
		case avro.TimeMillis, avro.TimeMicros:
			return iceberg.PrimitiveTypes.Time, nil
		case avro.TimestampMillis, avro.TimestampMicros:
			return iceberg.PrimitiveTypes.TimestampTz, nil
		case avro.LocalTimestampMillis, avro.LocalTimestampMicros:
			return iceberg.PrimitiveTypes.Timestamp, nil
		case avro.Decimal:
			d := w.Logical().(*avro.DecimalLogicalSchema)
			return iceberg.DecimalTypeOf(d.Precision(), d.Scale()), nil
		case avro.UUID:
			return iceberg.PrimitiveTypes.UUID, nil
		}
		switch w.Type() {
		case avro.Boolean:
			return iceberg.PrimitiveTypes.Bool, nil
		case avro.Int:
			return iceberg.PrimitiveTypes.Int32, nil
		case avro.Long:
			return iceberg.PrimitiveTypes.Int64, nil
		case avro.Float:
			return iceberg.PrimitiveTypes.Float32, nil
		case avro.Double:
			return iceberg.PrimitiveTypes.Float64, nil
		case avro.String:
			return iceberg.PrimitiveTypes.String, nil
		case avro.Bytes:
			return iceberg.PrimitiveTypes.Binary, nil
		}
	}
	return nil, fmt.Errorf("Avro type %s has no Iceberg type", w)
}
