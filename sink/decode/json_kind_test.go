package decode

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// A value of the wrong JSON kind for a struct, list or map column is
// rejected with a reason that says so. Arrow's JSON reader reports it
// with an error whose text panics; the reason must never carry that.
func TestJSONRejectsAValueOfTheWrongKindByName(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "dev", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
		{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
	}, nil)
	cases := map[string]string{
		`{"id":"x","dev":"str"}`: `column "dev" (struct) cannot hold the JSON string`,
		`{"id":"x","dev":5}`:     `column "dev" (struct) cannot hold the JSON number`,
		`{"id":"x","dev":[1]}`:   `column "dev" (struct) cannot hold the JSON array`,
		`{"id":"x","l":"s"}`:     `column "l" (list) cannot hold the JSON string`,
		`{"id":"x","l":{"a":1}}`: `column "l" (list) cannot hold the JSON object`,
		`{"id":"x","m":"s"}`:     `column "m" (map) cannot hold the JSON string`,
		`{"id":"x","m":[1]}`:     `column "m" (map) cannot hold the JSON array`,
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
	if len(d.Bad) != len(values) || d.Rows.NumRows() != 0 {
		t.Fatalf("rejected %d of %d values, kept %d rows", len(d.Bad), len(values), d.Rows.NumRows())
	}
	for _, b := range d.Bad {
		v := values[b.Index]
		if !strings.Contains(b.Reason, cases[v]) || strings.Contains(b.Reason, "PANIC") {
			t.Errorf("%s: rejected with %q, want a reason with %q", v, b.Reason, cases[v])
		}
	}
}
