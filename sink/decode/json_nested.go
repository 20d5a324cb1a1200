package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// hasTime reports whether t is, or holds at any depth, a timestamp.
func hasTime(t arrow.DataType) bool {
	switch t := t.(type) {
	case *arrow.TimestampType:
		return true
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if hasTime(f.Type) {
				return true
			}
		}
	case *arrow.MapType:
		return hasTime(t.KeyType()) || hasTime(t.ItemType())
	case arrow.ListLikeType:
		return hasTime(t.Elem())
	}
	return false
}

// rewriteTimes rewrites the RFC 3339 text of the timestamps in raw's
// columns cols (timestamps, or structs, lists and maps holding them) to
// integers in their unit.
func rewriteTimes(raw []byte, cols map[string]arrow.DataType) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%w: %w", errNotObject, err)
	}
	if obj == nil {
		return nil, errNotObject
	}
	changed := false
	for name, t := range cols {
		v, ok := obj[name]
		if !ok {
			continue
		}
		nv, ch, err := rewriteValue(v, t)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		if ch {
			obj[name], changed = nv, true
		}
	}
	if !changed {
		return raw, nil
	}
	return json.Marshal(obj)
}

// rewriteValue rewrites the RFC 3339 text of the timestamps in v, a value
// of type t, to integers in their unit. A value of another shape than t's
// is left to Arrow's reader, which refuses it with the reason.
func rewriteValue(v json.RawMessage, t arrow.DataType) (json.RawMessage, bool, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return v, false, nil
	}
	switch t := t.(type) {
	case *arrow.TimestampType:
		if v[0] != '"' {
			return v, false, nil
		}
		var text string
		if err := json.Unmarshal(v, &text); err != nil {
			return nil, false, err
		}
		at, ok := parseRFC3339(text)
		if !ok {
			return v, false, nil
		}
		return json.RawMessage(strconv.FormatInt(inUnit(at, t.Unit), 10)), true, nil
	case *arrow.StructType:
		if v[0] != '{' || !hasTime(t) {
			return v, false, nil
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(v, &obj); err != nil {
			return nil, false, err
		}
		changed := false
		for _, f := range t.Fields() {
			fv, ok := obj[f.Name]
			if !ok || !hasTime(f.Type) {
				continue
			}
			nv, ch, err := rewriteValue(fv, f.Type)
			if err != nil {
				return nil, false, fmt.Errorf("%s: %w", f.Name, err)
			}
			if ch {
				obj[f.Name], changed = nv, true
			}
		}
		if !changed {
			return v, false, nil
		}
		out, err := json.Marshal(obj)
		return out, true, err
	case *arrow.MapType: // a list of {"key": ..., "value": ...}
		return rewriteList(v, arrow.StructOf(
			arrow.Field{Name: "key", Type: t.KeyType()},
			arrow.Field{Name: "value", Type: t.ItemType()}))
	case arrow.ListLikeType:
		return rewriteList(v, t.Elem())
	}
	return v, false, nil
}

func rewriteList(v json.RawMessage, elem arrow.DataType) (json.RawMessage, bool, error) {
	if v[0] != '[' || !hasTime(elem) {
		return v, false, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, false, err
	}
	changed := false
	for i, it := range items {
		nv, ch, err := rewriteValue(it, elem)
		if err != nil {
			return nil, false, fmt.Errorf("[%d]: %w", i, err)
		}
		if ch {
			items[i], changed = nv, true
		}
	}
	if !changed {
		return v, false, nil
	}
	out, err := json.Marshal(items)
	return out, true, err
}
