package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// JSON decodes message values that are JSON objects into rows of sc, field
// by field name; fields sc does not name are ignored. Pass the table's
// Arrow schema (table.SchemaToArrowSchema of its schema) so that the sink
// resolves the columns by field id and the decoder knows the required
// columns.
//
// Values: what Arrow's JSON reader takes for each type, and for a
// timestamp (a column, or a field at any depth of a struct, list or map
// column) also RFC 3339 text with a zone ("Z" or an offset) and up to
// nine fractional digits, truncated to the column's unit; a timestamp
// without time zone stores the instant's UTC wall clock. Timestamps also take integers in the column's unit and, without
// a zone, zone-less text; dates take YYYY-MM-DD or days since the epoch.
//
// A value that is not a JSON object (an empty or nil value, a Kafka
// tombstone, included), that has a field that does not parse as its
// column's type, or that lacks a required (non-nullable) field or has it
// null, is not a row: it is returned in [Decoded.Bad] with the reason.
func JSON(sc *arrow.Schema) Decoder {
	return newJSONDecoder(sc, false).decode
}

// JSONFormat is the [Format] of [JSON] messages. With evolve, a field the
// schema lacks, at the top or inside the objects of a struct column, is
// reported as a new column (or new fields of the struct column) of the
// type its values take:
// an integral number long, another number double, text string, true or
// false boolean, an object a struct of its fields, an array a list of its
// elements' type (long and double make double); a field that is null in
// every message of the poll is not reported (it waits for a value).
func JSONFormat() Format {
	return func(sc *arrow.Schema, evolve bool) (Decoder, error) {
		return newJSONDecoder(sc, evolve).decode, nil
	}
}

func newJSONDecoder(sc *arrow.Schema, evolve bool) *jsonDecoder {
	d := &jsonDecoder{sc: sc, times: map[string]arrow.DataType{}, nestedTimes: map[string]arrow.DataType{}}
	if evolve {
		d.known, d.structs = map[string]bool{}, map[string]arrow.DataType{}
	}
	for i, f := range sc.Fields() {
		if d.known != nil {
			d.known[f.Name] = true
			if holdsStruct(f.Type) {
				d.structs[f.Name] = f.Type
			}
		}
		if !f.Nullable {
			d.required = append(d.required, i)
		}
		if hasRequiredInStruct(f.Type) {
			d.nested = append(d.nested, i)
		}
		if t, ok := f.Type.(*arrow.TimestampType); ok {
			d.times[f.Name] = t
			d.timeKeys = append(d.timeKeys, []byte(strconv.Quote(f.Name)))
			d.timeUnits = append(d.timeUnits, t.Unit)
		} else if hasTime(f.Type) {
			d.times[f.Name] = f.Type
			d.nestedTimes[f.Name] = f.Type
		}
	}
	return d
}

type jsonDecoder struct {
	sc          *arrow.Schema
	required    []int                     // columns
	nested      []int                     // columns holding a struct with a required field (padMissing)
	times       map[string]arrow.DataType // columns holding timestamps, at the top or deeper
	timeKeys    [][]byte                  // the timestamp columns' names, quoted
	timeUnits   []arrow.TimeUnit          // their units
	nestedTimes map[string]arrow.DataType // columns holding timestamps deeper
	known       map[string]bool           // the columns' names; nil unless evolving
	structs     map[string]arrow.DataType // the columns holding structs; nil unless evolving
}

// normalize rewrites the RFC 3339 text of a message's timestamps to
// integers: top-level columns by splicing when it can, else by a full
// parse, then the timestamps inside other columns.
func (d *jsonDecoder) normalize(v []byte, splice bool) ([]byte, error) {
	spliced, ok := v, false
	if splice {
		spliced, ok = d.spliceTimes(v)
	}
	cols := d.times
	if ok {
		v, cols = spliced, d.nestedTimes
	}
	if len(cols) == 0 {
		return v, nil
	}
	return rewriteTimes(v, cols)
}

// decode builds the batch in one pass when every value decodes (the
// usual case); otherwise it finds the values Arrow's reader refuses one
// at a time, and builds the batch again without them. Values with a null
// in a required column are found in the batch built.
func (d *jsonDecoder) decode(in [][]byte) (Decoded, error) {
	return d.decodeRows(in, nil)
}

// decodeRows is decode where keysOnly (nil, or one per value) marks the
// values whose required columns may be missing or null: the images of
// deleted rows, which name their key only.
func (d *jsonDecoder) decodeRows(in [][]byte, keysOnly []bool) (Decoded, error) {
	values := make([][]byte, len(in))
	var bad []Rejected
	keep := make([]int, 0, len(in))
	for i, raw := range in {
		v := bytes.TrimSpace(raw)
		if len(v) == 0 || v[0] != '{' {
			bad = append(bad, Rejected{Index: i, Reason: errNotObject.Error()})
			continue
		}
		v, err := d.normalize(v, true)
		if err != nil {
			bad = append(bad, Rejected{Index: i, Reason: err.Error()})
			continue
		}
		values[i] = v
		keep = append(keep, i)
	}
	rows, err := d.build(values, keep)
	if err != nil {
		var kept []int
		for _, i := range keep {
			v, err := d.normalize(bytes.TrimSpace(in[i]), false)
			if err != nil {
				bad = append(bad, Rejected{Index: i, Reason: err.Error()})
				continue
			}
			values[i] = v
			one, err := d.build(values, []int{i})
			if err != nil {
				bad = append(bad, Rejected{Index: i, Reason: d.reason(v, err)})
				continue
			}
			one.Release()
			kept = append(kept, i)
		}
		if rows, err = d.build(values, kept); err != nil {
			return Decoded{}, err
		}
		keep = kept
	}
	if nulls := d.requiredNulls(rows); len(nulls) > 0 {
		var kept []int
		for row, i := range keep {
			if reason, ok := nulls[row]; ok && (keysOnly == nil || !keysOnly[i]) {
				bad = append(bad, Rejected{Index: i, Reason: reason})
				continue
			}
			kept = append(kept, i)
		}
		rows.Release()
		if rows, err = d.build(values, kept); err != nil {
			return Decoded{}, err
		}
		keep = kept
	}
	sortRejected(bad)
	out := Decoded{Rows: rows, Bad: bad}
	if d.known != nil { // the new fields of the rows, not of the rejects
		news := &jsonNewFields{known: d.known, structs: d.structs, types: map[string]iceberg.Type{}}
		for _, i := range keep {
			news.add(values[i])
		}
		out.NewColumns = news.columns()
	}
	return out, nil
}

// build decodes values[idx] into one batch.
func (d *jsonDecoder) build(values [][]byte, idx []int) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, d.sc)
	defer b.Release()
	for _, i := range idx {
		if err := unmarshal(b, values[i]); err != nil {
			return nil, err
		}
		for _, c := range d.nested {
			padMissing(b.Field(c))
		}
	}
	return b.NewRecordBatch(), nil
}

// requiredNulls names, by row of rows, the first required column the row
// has no value of (the field was missing or null).
func (d *jsonDecoder) requiredNulls(rows arrow.RecordBatch) map[int]string {
	var out map[int]string
	for _, c := range d.required {
		col := rows.Column(c)
		if col.NullN() == 0 {
			continue
		}
		if out == nil {
			out = map[int]string{}
		}
		for row := 0; row < col.Len(); row++ {
			if _, seen := out[row]; !seen && col.IsNull(row) {
				out[row] = fmt.Sprintf("required field %q is missing or null", d.sc.Field(c).Name)
			}
		}
	}
	return out
}

// reason names the field of value (a normalized object that Arrow's
// reader refused with err) whose value the reader refuses alone.
func (d *jsonDecoder) reason(value []byte, err error) string {
	var obj map[string]json.RawMessage
	if jerr := json.Unmarshal(value, &obj); jerr != nil {
		return fmt.Sprintf("%s: %v", errNotObject, jerr)
	}
	for _, f := range d.sc.Fields() {
		v, ok := obj[f.Name]
		if !ok {
			continue
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{f}, nil))
		one, _ := json.Marshal(map[string]json.RawMessage{f.Name: v})
		ferr := unmarshal(b, one)
		b.Release()
		if ferr != nil {
			return columnReason(f, v)
		}
	}
	return errorText(err, "Arrow's JSON reader refused it")
}

// errorText is err's text, or otherwise when err's Error method panics
// (arrow-go's JSON reader returns a *json.UnmarshalTypeError without a
// Type for a value of the wrong kind for a struct, list or map column).
func errorText(err error, otherwise string) (text string) {
	defer func() {
		if recover() != nil {
			text = otherwise
		}
	}()
	return err.Error()
}

// jsonKind names the kind of the JSON value v.
func jsonKind(v json.RawMessage) string {
	t := bytes.TrimLeft(v, " \t\r\n")
	switch {
	case len(t) == 0:
		return "value"
	case t[0] == '"':
		return "string"
	case t[0] == '{':
		return "object"
	case t[0] == '[':
		return "array"
	case t[0] == 't' || t[0] == 'f':
		return "boolean"
	case t[0] == 'n':
		return "null"
	}
	return "number"
}

var errNotObject = errors.New("not a JSON object")

// unmarshal appends the record of data to b. Arrow's JSON reader panics
// on some malformed input (a number where an object key belongs); that is
// an error of this record, never a crash of the process.
func unmarshal(b *array.RecordBuilder, data []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errNotObject, r)
		}
	}()
	return b.UnmarshalJSON(data)
}

// spliceTimes rewrites, in a copy of raw, the RFC 3339 text that follows
// a timestamp column's quoted name and a colon to an integer in the
// column's unit, without parsing the rest of the record. It reports false
// when raw needs the full parse of rewriteTimes: text with escapes, or a
// name seen twice. Text it does not take (zone-less, digits) is left to
// Arrow's reader. A false hit (the name as a nested field's) can only make
// Arrow's reader refuse the record, which then goes through rewriteTimes
// from the record's own bytes.
func (d *jsonDecoder) spliceTimes(raw []byte) ([]byte, bool) {
	out := raw
	for k, key := range d.timeKeys {
		seen := false
		for at := 0; ; {
			i := bytes.Index(out[at:], key)
			if i < 0 {
				break
			}
			at += i + len(key)
			j := at + len(out[at:]) - len(bytes.TrimLeft(out[at:], " \t\r\n"))
			if j >= len(out) || out[j] != ':' {
				continue
			}
			j++
			j += len(out[j:]) - len(bytes.TrimLeft(out[j:], " \t\r\n"))
			if j >= len(out) || out[j] != '"' {
				continue
			}
			if seen {
				return nil, false
			}
			seen = true
			end := bytes.IndexByte(out[j+1:], '"')
			if end < 0 {
				return nil, false
			}
			text := out[j+1 : j+1+end]
			if bytes.IndexByte(text, '\\') >= 0 {
				return nil, false
			}
			t, ok := parseRFC3339(string(text))
			if !ok {
				continue
			}
			n := strconv.AppendInt(nil, inUnit(t, d.timeUnits[k]), 10)
			spliced := make([]byte, 0, len(out))
			spliced = append(append(append(spliced, out[:j]...), n...), out[j+2+end:]...)
			out, at = spliced, j+len(n)
		}
	}
	return out, true
}

// parseRFC3339 parses an RFC 3339 timestamp with a zone; a space for the
// "T" is taken too.
func parseRFC3339(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// inUnit is t since the epoch in unit, truncated toward the past.
func inUnit(t time.Time, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Second:
		return t.Unix()
	case arrow.Millisecond:
		return t.UnixMilli()
	case arrow.Microsecond:
		return t.UnixMicro()
	}
	return t.UnixNano()
}
