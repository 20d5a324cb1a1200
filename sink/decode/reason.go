package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	icetable "github.com/apache/iceberg-go/table"
)

// reasonValueMax bounds the text of a value quoted in a reason.
const reasonValueMax = 64

// columnReason says, in the table's terms, why column f cannot hold the
// JSON value v: the column, its Iceberg type and the value,
//
//	column "n" (int) cannot hold the JSON string "twelve"
//	column "n" (int) cannot hold the JSON number 3000000000: out of range
//
// never the Go error of the JSON reader.
func columnReason(f arrow.Field, v json.RawMessage) string {
	kind := jsonKind(v)
	out := fmt.Sprintf("column %q (%s) cannot hold the JSON %s %s", f.Name, typeName(f.Type), kind, quoteValue(v))
	if kind == "number" {
		if why := numberMismatch(f.Type, v); why != "" {
			out += ": " + why
		}
	}
	return out
}

// typeName is the Iceberg name of the column type t (struct, list and map
// without their fields).
func typeName(t arrow.DataType) string {
	switch t.(type) {
	case *arrow.StructType:
		return "struct"
	case arrow.ListLikeType:
		if _, ok := t.(*arrow.MapType); ok {
			return "map"
		}
		return "list"
	}
	it, err := icetable.ArrowTypeToIceberg(t, false)
	if err != nil {
		return t.String()
	}
	return it.String()
}

// quoteValue is the JSON text of v, shortened to reasonValueMax bytes.
func quoteValue(v json.RawMessage) string {
	t := bytes.TrimSpace(v)
	if len(t) <= reasonValueMax {
		return string(t)
	}
	cut := reasonValueMax
	for cut > 0 && !utf8.RuneStart(t[cut]) {
		cut--
	}
	return string(t[:cut]) + "…"
}

// numberMismatch says why the JSON number v does not fit the numeric
// column type t: a fraction for an integer, or out of its range; "" when
// it cannot tell.
func numberMismatch(t arrow.DataType, v json.RawMessage) string {
	if d, ok := t.(arrow.DecimalType); ok {
		r, ok := new(big.Rat).SetString(string(bytes.TrimSpace(v)))
		limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.GetPrecision()-d.GetScale())), nil)
		if ok && new(big.Rat).Abs(r).Cmp(new(big.Rat).SetInt(limit)) >= 0 {
			return fmt.Sprintf("out of range for precision %d, scale %d", d.GetPrecision(), d.GetScale())
		}
		return ""
	}
	var lo, hi int64
	switch t.ID() {
	case arrow.INT8:
		lo, hi = -1<<7, 1<<7-1
	case arrow.INT16:
		lo, hi = -1<<15, 1<<15-1
	case arrow.INT32:
		lo, hi = -1<<31, 1<<31-1
	case arrow.INT64:
		lo, hi = -1<<63, 1<<63-1
	default:
		return ""
	}
	r, ok := new(big.Rat).SetString(string(bytes.TrimSpace(v)))
	switch {
	case !ok:
		return ""
	case !r.IsInt():
		return "not an integer"
	case r.Num().Cmp(big.NewInt(lo)) < 0 || r.Num().Cmp(big.NewInt(hi)) > 0:
		return fmt.Sprintf("out of range (%d to %d)", lo, hi)
	}
	return ""
}
