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
	// frame finds a message's writer schema plan and its datum.
	frame func(value []byte) (*avroPlan, []byte, error)
}

func newAvroDecoder(sc *arrow.Schema, evolve bool) *avroDecoder {
	return &avroDecoder{sc: sc, evolve: evolve}
}

// avroPlan decodes the datums of one writer schema into rows.
type avroPlan struct {
	rec    *recordPlan
	newCol []sink.Column // writer fields the table lacks (with evolve)
	err    error         // the writer schema cannot be rows of the table
}

func (d *avroDecoder) planFor(w avro.Schema) *avroPlan {
	rs, ok := deref(w).(*avro.RecordSchema)
	if !ok {
		return &avroPlan{err: fmt.Errorf("the Avro writer schema is a %s, not a record", w.Type())}
	}
	rec, err := compileRecord(rs, d.sc.Fields())
	if err != nil {
		return &avroPlan{err: err}
	}
	p := &avroPlan{rec: rec}
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

// decode builds one batch of the values that decode. A value that fails
// midway leaves values in some builders: the rows decoded before it in
// the same run are decoded again into fresh builders and set apart as a
// part, so each good value is decoded at most twice.
func (d *avroDecoder) decode(values [][]byte) (Decoded, error) {
	var (
		out   Decoded
		parts []arrow.RecordBatch
		good  []int // values in the builders now
		datum = make([][]byte, len(values))
		plans = make([]*avroPlan, len(values))
		in    = &avroIn{Reader: avro.NewReader(nil, 0)}
		seen  = map[string]bool{}
	)
	b := array.NewRecordBuilder(memory.DefaultAllocator, d.sc)
	defer func() { b.Release() }()
	for i, value := range values {
		p, v, err := d.frame(value)
		if err == nil {
			err = p.err
		}
		if err != nil {
			out.Bad = append(out.Bad, Rejected{Index: i, Reason: err.Error()})
			continue
		}
		plans[i], datum[i] = p, v
		if err := p.row(in.reset(v), b); err != nil {
			out.Bad = append(out.Bad, Rejected{Index: i, Reason: err.Error()})
			b.Release()
			b = array.NewRecordBuilder(memory.DefaultAllocator, d.sc)
			for _, j := range good {
				if err := plans[j].row(in.reset(datum[j]), b); err != nil {
					releaseAll(parts)
					return Decoded{}, fmt.Errorf("avro: record %d decoded once, not twice: %w", j, err)
				}
			}
			parts = append(parts, b.NewRecordBatch())
			good = good[:0]
			continue
		}
		good = append(good, i)
		for _, c := range p.newCol { // of the rows, not of the rejects
			if key := c.Name + " " + c.Type.String(); !seen[key] {
				seen[key] = true
				out.NewColumns = append(out.NewColumns, c)
			}
		}
	}
	parts = append(parts, b.NewRecordBatch())
	rows, err := concatBatches(d.sc, parts)
	if err != nil {
		return Decoded{}, err
	}
	out.Rows = rows
	sortRejected(out.Bad)
	return out, nil
}

// row decodes one datum into b.
func (p *avroPlan) row(in *avroIn, b *array.RecordBuilder) error {
	for _, st := range p.rec.steps {
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
	for _, c := range p.rec.absent {
		b.Field(c).AppendNull()
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
