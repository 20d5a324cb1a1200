package kafka

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
	"github.com/twmb/franz-go/pkg/kgo"
)

// JSON decodes record values that are JSON objects into rows of sc, field
// by field name; fields sc does not name are ignored. Pass the table's
// Arrow schema (table.SchemaToArrowSchema of its schema) so that the sink
// resolves the columns by field id and the decoder knows the required
// columns.
//
// Values: what Arrow's JSON reader takes for each type, and for a
// top-level timestamp column also RFC 3339 text with a zone ("Z" or an
// offset) and up to nine fractional digits, truncated to the column's
// unit; a timestamp without time zone stores the instant's UTC wall
// clock. Timestamps also take integers in the column's unit and, without
// a zone, zone-less text; dates take YYYY-MM-DD or days since the epoch.
//
// A record that is not a JSON object, whose value does not parse as its
// column's type, or that lacks a required (non-nullable) field or has it
// null, is not a row: it is returned in [Decoded.Bad] with the reason.
func JSON(sc *arrow.Schema) Decoder {
	d := &jsonDecoder{sc: sc, times: map[string]*arrow.TimestampType{}}
	for _, f := range sc.Fields() {
		if !f.Nullable {
			d.required = append(d.required, f.Name)
		}
		if t, ok := f.Type.(*arrow.TimestampType); ok {
			d.times[f.Name] = t
		}
	}
	return d.decode
}

type jsonDecoder struct {
	sc       *arrow.Schema
	required []string
	times    map[string]*arrow.TimestampType
}

func (d *jsonDecoder) decode(recs []*kgo.Record) (Decoded, error) {
	values := make([][]byte, len(recs))
	var bad []Rejected
	keep := make([]int, 0, len(recs))
	for i, r := range recs {
		v, err := d.normalize(r.Value)
		if err != nil {
			bad = append(bad, Rejected{Index: i, Reason: err.Error()})
			continue
		}
		values[i] = v
		keep = append(keep, i)
	}
	rows, err := d.build(values, keep)
	if err == nil {
		return Decoded{Rows: rows, Bad: bad}, nil
	}
	// A value Arrow's reader refused: find which, one record at a time.
	var kept []int
	for _, i := range keep {
		one, err := d.build(values, []int{i})
		if err != nil {
			bad = append(bad, Rejected{Index: i, Reason: err.Error()})
			continue
		}
		one.Release()
		kept = append(kept, i)
	}
	rows, err = d.build(values, kept)
	if err != nil {
		return Decoded{}, err
	}
	sortRejected(bad)
	return Decoded{Rows: rows, Bad: bad}, nil
}

// build decodes values[idx] into one batch.
func (d *jsonDecoder) build(values [][]byte, idx []int) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, d.sc)
	defer b.Release()
	for _, i := range idx {
		if err := b.UnmarshalJSON(values[i]); err != nil {
			return nil, err
		}
	}
	return b.NewRecordBatch(), nil
}

var errNotObject = errors.New("not a JSON object")

// normalize checks that raw is an object holding every required field,
// and rewrites RFC 3339 timestamps to integers in their column's unit.
func (d *jsonDecoder) normalize(raw []byte) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%w: %w", errNotObject, err)
	}
	if obj == nil {
		return nil, errNotObject
	}
	for _, name := range d.required {
		v, ok := obj[name]
		if !ok {
			return nil, fmt.Errorf("required field %q is missing", name)
		}
		if string(bytes.TrimSpace(v)) == "null" {
			return nil, fmt.Errorf("required field %q is null", name)
		}
	}
	changed := false
	for name, typ := range d.times {
		v, ok := obj[name]
		if !ok || len(v) == 0 || v[0] != '"' {
			continue
		}
		var text string
		if err := json.Unmarshal(v, &text); err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		t, ok := parseRFC3339(text)
		if !ok {
			continue // zone-less text or digits: Arrow's reader decides
		}
		obj[name] = json.RawMessage(strconv.FormatInt(inUnit(t, typ.Unit), 10))
		changed = true
	}
	if !changed {
		return raw, nil
	}
	return json.Marshal(obj)
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
