package decode

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// A value a column cannot hold is rejected with a reason in the table's
// terms (the column, its Iceberg type, the value), never the Go error of
// the JSON reader ("json: cannot unmarshal ... into Go value of type").
func TestJSONReasonsInTableTerms(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	cases := map[string]string{
		`{"n": "twelve"}`:                           `column "n" (long) cannot hold the JSON string "twelve"`,
		`{"n": 1.5}`:                                `column "n" (long) cannot hold the JSON number 1.5: not an integer`,
		`{"i": 3000000000}`:                         `column "i" (int) cannot hold the JSON number 3000000000: out of range (-2147483648 to 2147483647)`,
		`{"amount": 12345678.5}`:                    `column "amount" (decimal(9, 2)) cannot hold the JSON number 12345678.5: out of range for precision 9, scale 2`,
		`{"ok": "yes"}`:                             `column "ok" (boolean) cannot hold the JSON string "yes"`,
		`{"amount": "ten"}`:                         `column "amount" (decimal(9, 2)) cannot hold the JSON string "ten"`,
		`{"s": {"a": true}}`:                        `column "s" (string) cannot hold the JSON object {"a": true}`,
		`{"n": "` + strings.Repeat("x", 100) + `"}`: `column "n" (long) cannot hold the JSON string "` + strings.Repeat("x", 63) + `…`,
	}
	var values []string
	for v := range cases {
		values = append(values, v)
	}
	d, err := JSON(sc)(messages(values...))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Rows.Release()
	if len(d.Bad) != len(values) {
		t.Fatalf("rejected %d of %d values: %+v", len(d.Bad), len(values), d.Bad)
	}
	for _, b := range d.Bad {
		v := values[b.Index]
		if b.Reason != cases[v] {
			t.Errorf("reason of %s = %q, want %q", v, b.Reason, cases[v])
		}
		if strings.Contains(b.Reason, "Go value") || strings.Contains(b.Reason, "json:") {
			t.Errorf("reason of %s = %q: Go internals", v, b.Reason)
		}
	}
}
