package decode

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/hamba/avro/v2"
)

// DebeziumAvroConfluent is the [Format] of Debezium's change events as
// Confluent's Avro converter (io.confluent.connect.avro.AvroConverter)
// writes them: the Confluent wire format of [AvroConfluent], the writer
// schemas by id ([LoadAvroSchemas]), each an envelope record with the
// fields before and after (null or the table's Value record), source (a
// record with lsn and ts_ms) and op (a string); its other fields are
// skipped. The events mean what they mean in [DebeziumFormat], with the
// same rejects, tombstones and columns _cdc_op, _cdc_lsn and _cdc_ts_ms;
// a message that is not in the wire format or names an unknown schema id
// is in [Decoded.Bad], and so is every message of an envelope schema that
// lacks a field the decoder reads or has it of another type.
//
// The row's columns are the fields of the image, a Value record decoded
// as [Avro] decodes a writer record (by field id, else by name; fields
// the table lacks skipped, or reported as new columns with evolve), with
// Kafka Connect's semantic types too: the converter names each in the
// "connect.name" property, and Debezium's time types
// (io.debezium.time.Date, Timestamp, MicroTimestamp, NanoTimestamp,
// ZonedTimestamp text, Time, MicroTime) and io.debezium.data.Uuid go
// into date, timestamp, timestamptz, time and uuid columns. Decimals
// (the connector's default decimal.handling.mode, precise) are the Avro
// decimal logical type.
func DebeziumAvroConfluent(schemas map[int32]avro.Schema) Format {
	return debeziumAvro(confluentFraming(schemas))
}

// DebeziumAvro is the [Format] of Debezium's change events as bare Avro
// datums (no framing) written with the envelope schema w: see
// [DebeziumAvroConfluent].
func DebeziumAvro(w avro.Schema) Format {
	return debeziumAvro(bareFraming(w))
}

func debeziumAvro(frame avroFraming) Format {
	return func(sc *arrow.Schema, evolve bool) (Decoder, error) {
		d := &debeziumAvroDecoder{
			frame: frame, rows: newAvroDecoder(sc, evolve, nil), cols: debeziumColumnsOf(sc),
			envelopes: map[int32]*envelopePlan{}, in: &avroIn{Reader: avro.NewReader(nil, 0)},
		}
		fill, err := d.cols.avroRecord()
		if err != nil {
			return nil, err
		}
		d.fill = fill
		return func(values [][]byte) (Decoded, error) {
			return decodeChanges(values, d.event, func(images []avroRow, _ []bool) (Decoded, error) {
				return d.rows.decodeRows(images)
			})
		}, nil
	}
}

// debeziumAvroDecoder reads a change event's envelope in a first pass
// (the images skipped), then decodes the image its op names from the
// same datum, into the builders, in a second (the avroDecoder's).
type debeziumAvroDecoder struct {
	frame     avroFraming
	rows      *avroDecoder
	cols      debeziumColumns
	fill      *avro.RecordSchema // of the event's columns the table has; nil for none
	envelopes map[int32]*envelopePlan
	in        *avroIn
}

// avroRecord is the record of the event's columns the table has, which
// the decoder fills from each event: the fill datum's schema; nil for
// none.
func (c debeziumColumns) avroRecord() (*avro.RecordSchema, error) {
	var fields []*avro.Field
	for _, col := range []struct {
		has  bool
		name string
		t    avro.Type
	}{{c.op, DebeziumOpColumn, avro.String}, {c.lsn, DebeziumLSNColumn, avro.Long}, {c.ts, DebeziumTsColumn, avro.Long}} {
		if !col.has {
			continue
		}
		f, err := avro.NewField(col.name, avro.NewPrimitiveSchema(col.t, nil))
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	if len(fields) == 0 {
		return nil, nil
	}
	return avro.NewRecordSchema("DebeziumColumns", "icerun", fields)
}

// fillDatum is the fill record's datum of an event (Avro's binary
// encoding: zig-zag varints, a string as its length and bytes).
func (c debeziumColumns) fillDatum(op string, lsn, ts int64) []byte {
	var b []byte
	if c.op {
		b = binary.AppendVarint(b, int64(len(op)))
		b = append(b, op...)
	}
	if c.lsn {
		b = binary.AppendVarint(b, lsn)
	}
	if c.ts {
		b = binary.AppendVarint(b, ts)
	}
	return b
}

// envelopePlan reads the change events of one envelope writer schema.
type envelopePlan struct {
	steps  []envelopeStep // one per envelope field, in the writer's order
	upsert *avroPlan      // the rows of the after image
	delete *avroPlan      // the rows of the before image
	err    error          // the writer schema is no envelope the decoder reads
}

type envelopeStep func(in *avroIn, e *envelopeEvent) error

// envelopeEvent is what the first pass reads of an event.
type envelopeEvent struct {
	op            string
	before, after bool // the image is not null
	lsn, ts       *int64
}

func (d *debeziumAvroDecoder) envelope(id int32, w avro.Schema) *envelopePlan {
	p, ok := d.envelopes[id]
	if !ok {
		p = d.envelopePlan(w)
		d.envelopes[id] = p
	}
	return p
}

func (d *debeziumAvroDecoder) envelopePlan(w avro.Schema) *envelopePlan {
	rs, ok := deref(w).(*avro.RecordSchema)
	if !ok {
		return &envelopePlan{err: fmt.Errorf("debezium: the Avro writer schema is a %s, not an envelope record", w.Type())}
	}
	p := &envelopePlan{}
	var skips []skipFn // of the fields before the one compiled
	for _, f := range rs.Fields() {
		var (
			step envelopeStep
			err  error
		)
		switch f.Name() {
		case "before", "after":
			var img avroImage
			if img, err = imageOf(f); err != nil {
				break
			}
			row := d.rows.recordPlan(img.rec, d.fill)
			row.lead = img.lead(slices.Clone(skips))
			if f.Name() == "before" {
				p.delete = row
				step = func(in *avroIn, e *envelopeEvent) (err error) { e.before, err = img.read(in); return err }
			} else {
				p.upsert = row
				step = func(in *avroIn, e *envelopeEvent) (err error) { e.after, err = img.read(in); return err }
			}
		case "source":
			step, err = sourceStep(f)
		case "op":
			if t, ok := deref(f.Type()).(*avro.PrimitiveSchema); !ok || t.Type() != avro.String {
				err = fmt.Errorf("debezium: field op is %s, not a string", f.Type())
				break
			}
			step = func(in *avroIn, e *envelopeEvent) error { e.op = in.ReadString(); return nil }
		default:
			skip := skipper(f.Type())
			step = func(in *avroIn, _ *envelopeEvent) error { return skip(in) }
		}
		if err != nil {
			return &envelopePlan{err: fmt.Errorf("%w (of the Avro writer schema %s)", err, rs.FullName())}
		}
		p.steps = append(p.steps, step)
		skips = append(skips, skipper(f.Type()))
	}
	if p.upsert == nil || p.delete == nil || len(p.steps) == 0 {
		return &envelopePlan{err: fmt.Errorf("debezium: the Avro writer schema %s is not a change event envelope (before, after, source and op)", rs.FullName())}
	}
	return p
}

// avroImage is the type of an envelope's before or after field: a union
// of null and the Value record, or the record alone.
type avroImage struct {
	name   string // the field's: before or after
	rec    *avro.RecordSchema
	branch int64 // the record's union branch; -1: not a union
	n      int64 // union branches
	skip   skipFn
}

func imageOf(f *avro.Field) (avroImage, error) {
	bad := fmt.Errorf("debezium: field %s is %s, not a record or a union of null and a record", f.Name(), f.Type())
	t := deref(f.Type())
	if rec, ok := t.(*avro.RecordSchema); ok {
		return avroImage{name: f.Name(), rec: rec, branch: -1, skip: skipper(rec)}, nil
	}
	u, ok := t.(*avro.UnionSchema)
	if !ok {
		return avroImage{}, bad
	}
	img := avroImage{name: f.Name(), n: int64(len(u.Types()))}
	for i, bt := range u.Types() {
		if _, null := bt.(*avro.NullSchema); null {
			continue
		}
		rec, ok := deref(bt).(*avro.RecordSchema)
		if !ok || img.rec != nil {
			return avroImage{}, bad
		}
		img.rec, img.branch, img.skip = rec, int64(i), skipper(rec)
	}
	if img.rec == nil {
		return avroImage{}, bad
	}
	return img, nil
}

// read reads the image and skips it: false for null.
func (img avroImage) read(in *avroIn) (bool, error) {
	if img.branch >= 0 {
		i := in.ReadLong()
		if in.Error != nil {
			return false, in.Error
		}
		if i < 0 || i >= img.n {
			return false, fmt.Errorf("%s: union branch %d of %d", img.name, i, img.n)
		}
		if i != img.branch {
			return false, nil
		}
	}
	return true, img.skip(in)
}

// lead reads a datum up to the image's record: the fields before it
// (skips), then its union branch.
func (img avroImage) lead(skips []skipFn) skipFn {
	return func(in *avroIn) error {
		for _, s := range skips {
			if err := s(in); err != nil {
				return err
			}
		}
		if img.branch >= 0 {
			if i := in.ReadLong(); in.Error == nil && i != img.branch {
				return fmt.Errorf("the %s image is null", img.name)
			}
		}
		return in.Error
	}
}

// sourceStep reads source.lsn and source.ts_ms, skipping the source's
// other fields. A source without them leaves them missing: every event
// is then a reject, as in JSON.
func sourceStep(f *avro.Field) (envelopeStep, error) {
	rec, ok := deref(f.Type()).(*avro.RecordSchema)
	if !ok {
		return nil, fmt.Errorf("debezium: field source is %s, not a record", f.Type())
	}
	steps := make([]envelopeStep, len(rec.Fields()))
	for i, sf := range rec.Fields() {
		var set func(e *envelopeEvent, v *int64)
		switch sf.Name() {
		case "lsn":
			set = func(e *envelopeEvent, v *int64) { e.lsn = v }
		case "ts_ms":
			set = func(e *envelopeEvent, v *int64) { e.ts = v }
		default:
			skip := skipper(sf.Type())
			steps[i] = func(in *avroIn, _ *envelopeEvent) error { return skip(in) }
			continue
		}
		read, err := optionalLong(sf)
		if err != nil {
			return nil, err
		}
		steps[i] = func(in *avroIn, e *envelopeEvent) error {
			v, err := read(in)
			set(e, v)
			return err
		}
	}
	return func(in *avroIn, e *envelopeEvent) error {
		for _, s := range steps {
			if err := s(in, e); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// optionalLong reads a source field of type long or int, or a union of
// those and null: nil for null.
func optionalLong(f *avro.Field) (func(*avroIn) (*int64, error), error) {
	bad := fmt.Errorf("debezium: field source.%s is %s, not a long", f.Name(), f.Type())
	number := func(t avro.Schema) func(*avroIn) *int64 {
		p, ok := deref(t).(*avro.PrimitiveSchema)
		switch {
		case ok && p.Type() == avro.Long:
			return func(in *avroIn) *int64 { v := in.ReadLong(); return &v }
		case ok && p.Type() == avro.Int:
			return func(in *avroIn) *int64 { v := int64(in.ReadInt()); return &v }
		}
		return nil
	}
	if read := number(f.Type()); read != nil {
		return func(in *avroIn) (*int64, error) { return read(in), in.Error }, nil
	}
	u, ok := deref(f.Type()).(*avro.UnionSchema)
	if !ok {
		return nil, bad
	}
	branches := make([]func(*avroIn) *int64, len(u.Types()))
	for i, bt := range u.Types() {
		if _, null := bt.(*avro.NullSchema); null {
			branches[i] = func(*avroIn) *int64 { return nil }
		} else if branches[i] = number(bt); branches[i] == nil {
			return nil, bad
		}
	}
	return func(in *avroIn) (*int64, error) {
		i := in.ReadLong()
		if in.Error != nil {
			return nil, in.Error
		}
		if i < 0 || i >= int64(len(branches)) {
			return nil, fmt.Errorf("source.%s: union branch %d of %d", f.Name(), i, len(branches))
		}
		v := branches[i](in)
		return v, in.Error
	}, nil
}

// event reads a value's envelope: its change, and the row of its image
// (the same datum, read by the image's plan), or why it is no row.
func (d *debeziumAvroDecoder) event(v []byte) (Change, avroRow, bool, string) {
	if len(v) == 0 {
		return Change{}, avroRow{}, true, ""
	}
	id, w, datum, err := d.frame(v)
	if err != nil {
		return Change{}, avroRow{}, false, err.Error()
	}
	p := d.envelope(id, w)
	if p.err != nil {
		return Change{}, avroRow{}, false, p.err.Error()
	}
	in := d.in.reset(datum)
	var e envelopeEvent
	for _, s := range p.steps {
		if err := s(in, &e); err != nil {
			return Change{}, avroRow{}, false, fmt.Sprintf("debezium: %v", err)
		}
		if in.Error != nil {
			return Change{}, avroRow{}, false, fmt.Sprintf("debezium: %v", in.Error)
		}
	}
	c, reason := debeziumChange(e.op, e.before, e.after, e.lsn, e.ts)
	if reason != "" {
		return Change{}, avroRow{}, false, reason
	}
	row := avroRow{plan: p.upsert, datum: datum, fill: d.cols.fillDatum(e.op, *e.lsn, *e.ts)}
	if c.Op == Delete {
		row.plan, row.keysOnly = p.delete, true
	}
	return c, row, false, ""
}
