package decode

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// FuzzJSONDecode: no message makes the decoder panic, and every batch it
// returns is well formed (each field as long as its struct, each list's
// values as long as its offsets say), one row per record not rejected.
func FuzzJSONDecode(f *testing.F) {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "n", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 3, Name: "amount", Type: iceberg.DecimalTypeOf(9, 2)},
		iceberg.NestedField{ID: 4, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 5, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 6, Name: "ok", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 7, Name: "who", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 8, Name: "name", Type: iceberg.PrimitiveTypes.String, Required: true},
			{ID: 9, Name: "tags", Type: &iceberg.ListType{ElementID: 10, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
				{ID: 11, Name: "k", Type: iceberg.PrimitiveTypes.String, Required: true},
				{ID: 12, Name: "v", Type: iceberg.PrimitiveTypes.Float64},
			}}, ElementRequired: true}},
		}}},
		iceberg.NestedField{ID: 13, Name: "attrs", Type: &iceberg.MapType{KeyID: 14, KeyType: iceberg.PrimitiveTypes.String, ValueID: 15, ValueType: iceberg.PrimitiveTypes.Int64}},
		iceberg.NestedField{ID: 16, Name: "blob", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 17, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
	)
	sc, err := icetable.SchemaToArrowSchema(sch, nil, true, false)
	if err != nil {
		f.Fatal(err)
	}
	decode := JSON(sc)
	for _, seed := range []string{
		`{"id": "a", "n": 1, "amount": 1.25, "ts": "2026-07-14T12:00:00Z", "day": "2026-07-14", "ok": true}`,
		`{"id": "b", "who": {"name": "x", "tags": [{"k": "a", "v": 1.5}, {"k": "b"}]}, "attrs": {"a": 1}}`,
		`{"id": "c", "who": {}}`,
		`{"id": "d", "who": {"tags": [{}]}}`,
		`{"id": "e", "ts": 9000000000000000000, "amount": 12345678901.23}`,
		`{"id": "f", "ts": "+99999-01-01T00:00:00Z", "u": "not-a-uuid", "blob": "AAEC"}`,
		`{"id": "g", "n": 3000000000, "attrs": {"a": null}, "who": null}`,
		`[1, 2]`, `{"id": "h"`, `null`, ``,
	} {
		f.Add([]byte(seed), []byte(`{"id": "z"}`))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		msgs := [][]byte{a, b, a}
		d, err := decode(msgs)
		if err != nil {
			return
		}
		defer d.Rows.Release()
		if got, want := int(d.Rows.NumRows()), len(msgs)-len(d.Bad); got != want {
			t.Fatalf("%d rows for %d values and %d rejected", got, len(msgs), len(d.Bad))
		}
		for i, c := range d.Rows.Columns() {
			if err := wellFormed(c); err != "" {
				t.Fatalf("column %s: %s", d.Rows.Schema().Field(i).Name, err)
			}
		}
	})
}

// wellFormed says what is wrong with a's layout, or "".
func wellFormed(a arrow.Array) string {
	switch a := a.(type) {
	case *array.Struct:
		for i := 0; i < a.NumField(); i++ {
			f := a.Field(i)
			if f.Len() < a.Len() {
				return "a field shorter than its struct"
			}
			if s := wellFormed(f); s != "" {
				return s
			}
		}
	case array.ListLike:
		if a.Len() > 0 {
			_, end := a.ValueOffsets(a.Len() - 1)
			if int(end) > a.ListValues().Len() {
				return "list offsets past its values"
			}
		}
		return wellFormed(a.ListValues())
	}
	return ""
}
