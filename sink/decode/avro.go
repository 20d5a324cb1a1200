package decode

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/hamba/avro/v2"

	"github.com/icerun/icerun/sink"
)

// avroDecoder decodes Avro datums straight into the Arrow builders of
// the table's schema, with a plan compiled once per writer schema.
type avroDecoder struct {
	sc     *arrow.Schema
	evolve bool
	frame  avroFraming
	plans  map[int32]*avroPlan // by the framing's schema id
}

func newAvroDecoder(sc *arrow.Schema, evolve bool, frame avroFraming) *avroDecoder {
	return &avroDecoder{sc: sc, evolve: evolve, frame: frame, plans: map[int32]*avroPlan{}}
}

// avroPlan decodes the datums of one writer schema into rows.
type avroPlan struct {
	// lead reads what precedes the row's record in a datum (a change
	// event's envelope up to its image); nil: the datum is the record.
	lead   skipFn
	rec    *recordPlan
	fill   []recordStep  // columns decoded from the row's fill datum
	newCol []sink.Column // writer fields the table lacks (with evolve)
	err    error         // the writer schema cannot be rows of the table
}

// avroRow is one datum to decode into a row.
type avroRow struct {
	plan  *avroPlan
	datum []byte
	// fill is the datum of the plan's fill columns: a record of them,
	// in the plan's order.
	fill []byte
	// keysOnly: the row is a deleted row's image, whose required
	// columns may be null (only its key matters).
	keysOnly bool
	err      error // the value is no datum: a reject with this reason
}

// plan is the plan of the writer schema the framing found for id.
func (d *avroDecoder) plan(id int32, w avro.Schema) *avroPlan {
	p, ok := d.plans[id]
	if !ok {
		p = d.planFor(w)
		d.plans[id] = p
	}
	return p
}

func (d *avroDecoder) planFor(w avro.Schema) *avroPlan {
	rs, ok := deref(w).(*avro.RecordSchema)
	if !ok {
		return &avroPlan{err: fmt.Errorf("the Avro writer schema is a %s, not a record", w.Type())}
	}
	return d.recordPlan(rs, nil)
}

// recordPlan is the plan of rows of the record rs, and of the columns
// named by the fields of fill (nil for none): those come from each row's
// fill datum, never from rs.
func (d *avroDecoder) recordPlan(rs *avro.RecordSchema, fill *avro.RecordSchema) *avroPlan {
	targets := d.sc.Fields()
	filled := map[int]bool{}
	var fillSteps []recordStep
	if fill != nil {
		for _, f := range fill.Fields() {
			idx := d.sc.FieldIndices(f.Name())
			if len(idx) != 1 {
				return &avroPlan{err: fmt.Errorf("no column %q to fill", f.Name())}
			}
			dec, err := compile(f.Type(), targets[idx[0]])
			if err != nil {
				return &avroPlan{err: err}
			}
			fillSteps = append(fillSteps, recordStep{col: idx[0], dec: dec})
			filled[idx[0]] = true
			// No field of rs maps to a filled column: a name no Avro
			// field has, and nullable, so that it is only absent.
			targets[idx[0]] = arrow.Field{Name: "\x00" + f.Name(), Type: targets[idx[0]].Type, Nullable: true}
		}
	}
	rec, err := compileRecord(rs, targets)
	if err != nil {
		return &avroPlan{err: err}
	}
	absent := rec.absent[:0]
	for _, c := range rec.absent {
		if !filled[c] {
			absent = append(absent, c)
		}
	}
	rec.absent = absent
	p := &avroPlan{rec: rec, fill: fillSteps}
	if d.evolve {
		for _, f := range rec.unknown {
			if t, err := icebergType(f.Type()); err == nil {
				p.newCol = append(p.newCol, sink.Column{Name: f.Name(), Type: t})
			}
		}
		p.newCol = append(p.newCol, newNestedFields(rs, rec, d.sc)...)
	}
	return p
}

// decode frames the values, then decodes their datums.
func (d *avroDecoder) decode(values [][]byte) (Decoded, error) {
	rows := make([]avroRow, len(values))
	for i, v := range values {
		id, w, datum, err := d.frame(v)
		if err != nil {
			rows[i].err = err
			continue
		}
		rows[i] = avroRow{plan: d.plan(id, w), datum: datum}
	}
	return d.decodeRows(rows)
}

// decodeRows builds one batch of the rows that decode; the others are in
// Bad, by their index in rows. A row that fails midway leaves values in
// some builders: the rows decoded before it in the same run are decoded
// again into fresh builders and set apart as a part, so each good row is
// decoded at most twice.
func (d *avroDecoder) decodeRows(rows []avroRow) (Decoded, error) {
	var (
		out   Decoded
		parts []arrow.RecordBatch
		good  []int // rows in the builders now
		in    = &avroIn{Reader: avro.NewReader(nil, 0)}
		seen  = map[string]bool{}
	)
	b := array.NewRecordBuilder(memory.DefaultAllocator, d.sc)
	defer func() { b.Release() }()
	for i, r := range rows {
		err := r.err
		if err == nil {
			err = r.plan.err
		}
		if err != nil {
			out.Bad = append(out.Bad, Rejected{Index: i, Reason: err.Error()})
			continue
		}
		if err := r.plan.row(in, r, b); err != nil {
			out.Bad = append(out.Bad, Rejected{Index: i, Reason: err.Error()})
			b.Release()
			b = array.NewRecordBuilder(memory.DefaultAllocator, d.sc)
			for _, j := range good {
				if err := rows[j].plan.row(in, rows[j], b); err != nil {
					releaseAll(parts)
					return Decoded{}, fmt.Errorf("avro: record %d decoded once, not twice: %w", j, err)
				}
			}
			parts = append(parts, b.NewRecordBatch())
			good = good[:0]
			continue
		}
		good = append(good, i)
		for _, c := range r.plan.newCol { // of the rows, not of the rejects
			if key := c.Name + " " + c.Type.String(); !seen[key] {
				seen[key] = true
				out.NewColumns = append(out.NewColumns, c)
			}
		}
	}
	parts = append(parts, b.NewRecordBatch())
	batch, err := concatBatches(d.sc, parts)
	if err != nil {
		return Decoded{}, err
	}
	out.Rows = batch
	sortRejected(out.Bad)
	return out, nil
}

// row decodes the datum of r into b.
func (p *avroPlan) row(in *avroIn, r avroRow, b *array.RecordBuilder) error {
	in.reset(r.datum)
	in.keysOnly = r.keysOnly
	if p.lead != nil {
		if err := p.lead(in); err != nil {
			return err
		}
	}
	if err := runSteps(in, p.rec.steps, b); err != nil {
		return err
	}
	for _, c := range p.rec.absent {
		b.Field(c).AppendNull()
	}
	if len(p.fill) > 0 {
		in.reset(r.fill)
		return runSteps(in, p.fill, b)
	}
	return nil
}

func runSteps(in *avroIn, steps []recordStep, b *array.RecordBuilder) error {
	for _, st := range steps {
		var err error
		if st.dec != nil {
			err = st.dec(in, b.Field(st.col))
		} else {
			err = st.skip(in)
		}
		if err == nil {
			err = in.Error
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// concatBatches is parts as one batch; it releases parts.
func concatBatches(sc *arrow.Schema, parts []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(parts) == 1 {
		return parts[0], nil
	}
	defer releaseAll(parts)
	cols := make([]arrow.Array, sc.NumFields())
	var n int64
	for _, p := range parts {
		n += p.NumRows()
	}
	for c := range cols {
		arrs := make([]arrow.Array, len(parts))
		for i, p := range parts {
			arrs[i] = p.Column(c)
		}
		col, err := array.Concatenate(arrs, memory.DefaultAllocator)
		if err != nil {
			return nil, fmt.Errorf("avro: concatenate: %w", err)
		}
		defer col.Release()
		cols[c] = col
	}
	return array.NewRecordBatch(sc, cols, n), nil
}

// avroIn is the reader of one datum and its size, which bounds the
// item counts of its arrays and maps.
type avroIn struct {
	*avro.Reader
	size int
	// keysOnly: the datum is a deleted row's image, whose required
	// columns may be null.
	keysOnly bool
}

func (in *avroIn) reset(v []byte) *avroIn {
	in.Reader.Reset(v)
	in.Error = nil
	in.size = len(v)
	return in
}

// blocks reads the blocks of an array or map, calling item for each item.
func (in *avroIn) blocks(item func() error) error {
	for {
		n, _ := in.ReadBlockHeader()
		if in.Error != nil {
			return in.Error
		}
		if n == 0 {
			return nil
		}
		if n < 0 || n > int64(in.size) {
			return fmt.Errorf("avro: block of %d items in a datum of %d bytes", n, in.size)
		}
		for range n {
			if err := item(); err != nil {
				return err
			}
			if in.Error != nil {
				return in.Error
			}
		}
	}
}

// fieldID is the "field-id" property of an Avro field, if it has one.
func fieldID(f *avro.Field) (int, bool) {
	switch v := f.Prop("field-id").(type) {
	case float64:
		return int(v), true
	case int:
		return v, true
	case int64:
		return int(v), true
	case string:
		n, err := strconv.Atoi(v)
		return n, err == nil
	}
	return 0, false
}

// arrowFieldID is the Iceberg field id of an Arrow field of the table.
func arrowFieldID(f arrow.Field) (int, bool) {
	v, ok := f.Metadata.GetValue("PARQUET:field_id")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

func deref(w avro.Schema) avro.Schema {
	if r, ok := w.(*avro.RefSchema); ok {
		return r.Schema()
	}
	return w
}

func releaseAll(batches []arrow.RecordBatch) {
	for _, b := range batches {
		b.Release()
	}
}
