package enginestest

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Row is one row as the engines report it: column name to typed value
// (see engines.py: "null", "i:42", "f:<bits>", "s:text", ...; structs are
// maps, lists are slices).
type Row map[string]any

// Canon is the row as canonical text (JSON with sorted keys): equal rows,
// equal text.
func (r Row) Canon() string {
	b, err := json.Marshal(map[string]any(r))
	if err != nil {
		panic(err) // only strings, maps and slices: cannot fail
	}
	return string(b)
}

// Str returns column col's string value ("s:" removed); a value of
// another type comes as it is ("null" for null, "i:42").
func (r Row) Str(col string) string {
	s, _ := r[col].(string)
	return strings.TrimPrefix(s, "s:")
}

// Int returns column col's integer value, 0 for null.
func (r Row) Int(col string) int64 {
	s, _ := r[col].(string)
	n, _ := strconv.ParseInt(strings.TrimPrefix(s, "i:"), 10, 64)
	return n
}
