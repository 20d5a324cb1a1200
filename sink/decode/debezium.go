package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// DebeziumOrder names the ordering fields of a [DebeziumFormat] change,
// in the order of [Change.Order]: the source's log sequence number, then
// the source's commit time in milliseconds.
var DebeziumOrder = [...]string{"source.lsn", "source.ts_ms"}

// DebeziumFormat is the [Format] of Debezium's change events as Kafka
// Connect's JSON converter writes them: the envelope with its schema part
// ({"schema": ..., "payload": {...}}, schemas.enable=true, the
// converter's default) or without it (the payload alone); for
// Confluent's Avro converter, see [DebeziumAvroConfluent]. Each value is
// one row and one [Change] in [Decoded.Changes]:
//
//   - op "c" (insert), "r" (a snapshot's read) and "u" (update) are an
//     [Upsert] of the row in "after";
//   - op "d" is a [Delete] of the row in "before", which holds the key
//     columns at least (under PostgreSQL's default replica identity the
//     primary key only: the connector writes the zero of each other NOT
//     NULL column, null for the nullable ones; a required column that is
//     missing or null does not make a delete a reject);
//   - [Change.Order] is source.lsn then source.ts_ms ([DebeziumOrder]).
//
// The row's columns are the image's fields, decoded as [JSONFormat]
// decodes an object (fields the schema lacks are ignored, or reported as
// new columns with evolve); the schema part is not read, so a column's
// values are what the connector writes in the payload: set the
// connector's decimal.handling.mode to string (or double) for decimal
// columns, since its default (precise) writes unscaled bytes. A tombstone
// (a nil or empty value, or a null payload: what the connector sends
// after a delete for log compaction) is no row: its index is in
// [Decoded.Skipped]. A value that is not an envelope, has another op
// (a truncate, "t", names no row), lacks the image its op needs, lacks
// source.lsn or source.ts_ms, or whose image does not decode, is in
// [Decoded.Bad] with the reason.
//
// The LSN orders the changes of one key: PostgreSQL's row locks make a
// later change of a row follow the earlier one's commit in the log, so
// its LSN is greater, across transactions too. A snapshot's rows ("r")
// share the snapshot's LSN, one row per key. Changes of different keys
// in concurrent transactions may come in an order their LSNs do not
// follow; only a per-key comparison is meaningful.
//
// The event's own fields reach the row through the columns named
// [DebeziumOpColumn], [DebeziumLSNColumn] and [DebeziumTsColumn], when
// the table declares them: a change-log write (the sink's upsert mode)
// compares table columns with the stored rows, so a table kept by
// Debezium declares _cdc_lsn (long) to order by it and _cdc_op (string)
// to delete by it (_cdc_op = 'd'). A table without them gets the image's
// columns only.
func DebeziumFormat() Format {
	return func(sc *arrow.Schema, evolve bool) (Decoder, error) {
		d := &debeziumDecoder{rows: newJSONDecoder(sc, evolve), debeziumColumns: debeziumColumnsOf(sc)}
		return func(values [][]byte) (Decoded, error) {
			return decodeChanges(values, d.event, d.rows.decodeRows)
		}, nil
	}
}

// The columns a [DebeziumFormat] row takes from its event, when the
// table has them.
const (
	DebeziumOpColumn  = "_cdc_op"    // string: the op, c, r, u or d
	DebeziumLSNColumn = "_cdc_lsn"   // long: source.lsn
	DebeziumTsColumn  = "_cdc_ts_ms" // long: source.ts_ms
)

// DebeziumDelete is the [DebeziumOpColumn] value of a delete.
const DebeziumDelete = "d"

type debeziumDecoder struct {
	rows *jsonDecoder
	debeziumColumns
}

// debeziumColumns says which of the columns a change event fills the
// table has.
type debeziumColumns struct {
	// op, lsn and ts: the table has the column of that name.
	op, lsn, ts bool
}

func debeziumColumnsOf(sc *arrow.Schema) debeziumColumns {
	return debeziumColumns{op: sc.HasField(DebeziumOpColumn), lsn: sc.HasField(DebeziumLSNColumn), ts: sc.HasField(DebeziumTsColumn)}
}

// stamp is image with the event's fields the table has columns for
// added; an image that is not an object is left for the row decoder to
// reject.
func (d *debeziumDecoder) stamp(image []byte, op string, lsn, ts int64) []byte {
	t := bytes.TrimSpace(image)
	if !d.op && !d.lsn && !d.ts || len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return image
	}
	out := append([]byte(nil), t[:len(t)-1]...)
	sep := len(bytes.TrimSpace(t[1:len(t)-1])) > 0
	add := func(name, value string) {
		if sep {
			out = append(out, ',')
		}
		sep = true
		out = append(out, '"')
		out = append(out, name...)
		out = append(out, '"', ':')
		out = append(out, value...)
	}
	if d.op {
		add(DebeziumOpColumn, strconv.Quote(op))
	}
	if d.lsn {
		add(DebeziumLSNColumn, strconv.FormatInt(lsn, 10))
	}
	if d.ts {
		add(DebeziumTsColumn, strconv.FormatInt(ts, 10))
	}
	return append(out, '}')
}

// debeziumPayload is the part of a change event the decoder reads.
type debeziumPayload struct {
	Op     string          `json:"op"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
	Source *struct {
		LSN  *int64 `json:"lsn"`
		TsMs *int64 `json:"ts_ms"`
	} `json:"source"`
}

// debeziumMessage is a value with or without the schema part.
type debeziumMessage struct {
	Schema  json.RawMessage `json:"schema"`
	Payload json.RawMessage `json:"payload"`
	debeziumPayload
}

// event is the change a value holds, its row's image, or why it is no
// row (skip: a tombstone; otherwise reason is the reject's).
func (d *debeziumDecoder) event(v []byte) (c Change, image []byte, skip bool, reason string) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return Change{}, nil, true, ""
	}
	if v[0] != '{' {
		return Change{}, nil, false, errNotObject.Error()
	}
	var m debeziumMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return Change{}, nil, false, fmt.Sprintf("debezium: %v", err)
	}
	p := m.debeziumPayload
	if m.Payload != nil && m.Op == "" {
		if isNull(m.Payload) {
			return Change{}, nil, true, ""
		}
		p = debeziumPayload{}
		if err := json.Unmarshal(m.Payload, &p); err != nil {
			return Change{}, nil, false, fmt.Sprintf("debezium: payload: %v", err)
		}
	}
	var lsn, ts *int64
	if p.Source != nil {
		lsn, ts = p.Source.LSN, p.Source.TsMs
	}
	c, reason = debeziumChange(p.Op, !isNull(p.Before), !isNull(p.After), lsn, ts)
	if reason != "" {
		return Change{}, nil, false, reason
	}
	image = p.After
	if c.Op == Delete {
		image = p.Before
	}
	return c, d.stamp(image, p.Op, *lsn, *ts), false, ""
}

// debeziumChange is the change of an event of op, with or without its
// before and after images, at the source position lsn and ts (nil when
// missing), or the reason it is no change: what every encoding of
// Debezium's events shares. The change's row is the after image of an
// [Upsert], the before image of a [Delete].
func debeziumChange(op string, before, after bool, lsn, ts *int64) (Change, string) {
	var c Change
	switch op {
	case "c", "r", "u":
		c.Op = Upsert
	case "d":
		c.Op = Delete
	case "":
		return Change{}, "debezium: not a change event (no op)"
	case "t":
		return Change{}, `debezium: a truncate (op "t") names no row`
	default:
		return Change{}, fmt.Sprintf("debezium: op %q is not c, r, u or d", op)
	}
	if c.Op == Upsert && !after {
		return Change{}, fmt.Sprintf("debezium: op %q without the after image", op)
	}
	if c.Op == Delete && !before {
		return Change{}, fmt.Sprintf("debezium: op %q without the before image", op)
	}
	if lsn == nil || ts == nil {
		return Change{}, "debezium: source.lsn or source.ts_ms is missing"
	}
	c.Order = []int64{*lsn, *ts}
	return c, ""
}

// isNull reports whether raw is absent or the JSON null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// decodeChanges is the change path of every encoding of Debezium's
// events: read reads a value's envelope (its change and its row's image,
// or skip for a tombstone, or the reason it is a reject); rows decodes
// the images of the changes in one batch, keysOnly marking the deletes',
// and its rejects are mapped back to the values.
func decodeChanges[I any](values [][]byte, read func([]byte) (Change, I, bool, string), rows func(images []I, keysOnly []bool) (Decoded, error)) (Decoded, error) {
	var (
		bad      []Rejected
		skipped  []int
		images   []I
		keysOnly []bool
		changes  []Change
		from     []int // the value of each image
	)
	for i, v := range values {
		c, image, skip, reason := read(v)
		switch {
		case skip:
			skipped = append(skipped, i)
		case reason != "":
			bad = append(bad, Rejected{Index: i, Reason: reason})
		default:
			images = append(images, image)
			keysOnly = append(keysOnly, c.Op == Delete)
			changes = append(changes, c)
			from = append(from, i)
		}
	}
	out, err := rows(images, keysOnly)
	if err != nil {
		return Decoded{}, err
	}
	kept := changes[:0]
	next := 0 // of out.Bad, by increasing image index
	for k, c := range changes {
		if next < len(out.Bad) && out.Bad[next].Index == k {
			bad = append(bad, Rejected{Index: from[k], Reason: out.Bad[next].Reason})
			next++
			continue
		}
		kept = append(kept, c)
	}
	sortRejected(bad)
	out.Bad, out.Changes, out.Skipped = bad, kept, skipped
	if len(out.Changes) == 0 {
		out.Changes = nil
	}
	return out, nil
}
