package decode

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/hamba/avro/v2"
)

// decodeFn decodes one Avro value into b; skipFn reads one and drops it.
type (
	decodeFn func(in *avroIn, b array.Builder) error
	skipFn   func(in *avroIn) error
)

// recordPlan decodes an Avro record into the columns (or struct fields)
// of a target: a step per writer field, in the writer's order.
type recordPlan struct {
	steps   []recordStep
	absent  []int         // target fields the writer lacks: null
	unknown []*avro.Field // writer fields the target lacks
}

type recordStep struct {
	col  int
	dec  decodeFn // nil: skip
	skip skipFn
}

// compileRecord maps the fields of w to targets by field id (a writer
// field's "field-id" property the targets have), else by name.
func compileRecord(w *avro.RecordSchema, targets []arrow.Field) (*recordPlan, error) {
	p := &recordPlan{}
	cols := matchFields(w, targets)
	used := make([]bool, len(targets))
	for i, wf := range w.Fields() {
		col := cols[i]
		if col < 0 {
			p.unknown = append(p.unknown, wf)
			p.steps = append(p.steps, recordStep{skip: skipper(wf.Type())})
			continue
		}
		used[col] = true
		dec, err := compile(wf.Type(), targets[col])
		if err != nil {
			return nil, err
		}
		p.steps = append(p.steps, recordStep{col: col, dec: dec})
	}
	for i, f := range targets {
		if used[i] {
			continue
		}
		if !f.Nullable {
			return nil, fmt.Errorf("required field %q is missing from the Avro writer schema %s", f.Name, w.FullName())
		}
		p.absent = append(p.absent, i)
	}
	return p, nil
}

// matchFields maps the fields of w to targets by field id (a writer
// field's "field-id" property the targets have), else by name: the
// target's index per writer field, -1 for none (or one taken by an
// earlier writer field).
func matchFields(w *avro.RecordSchema, targets []arrow.Field) []int {
	byID, byName := map[int]int{}, map[string]int{}
	for i, f := range targets {
		if id, ok := arrowFieldID(f); ok {
			byID[id] = i
		}
		byName[f.Name] = i
	}
	out := make([]int, len(w.Fields()))
	used := make([]bool, len(targets))
	for i, wf := range w.Fields() {
		col, ok := -1, false
		if id, has := fieldID(wf); has {
			col, ok = byID[id]
		}
		if !ok {
			col, ok = byName[wf.Name()]
		}
		if !ok || used[col] {
			out[i] = -1
			continue
		}
		used[col] = true
		out[i] = col
	}
	return out
}

// compile makes the decoder of Avro values of type w into the builder of
// target. A union branch that does not fit fails only the values that
// take it.
func compile(w avro.Schema, target arrow.Field) (decodeFn, error) {
	switch w := deref(w).(type) {
	case *avro.UnionSchema:
		branches := make([]decodeFn, len(w.Types()))
		fits := 0
		for i, bt := range w.Types() {
			if _, null := bt.(*avro.NullSchema); null && !target.Nullable {
				branches[i] = requiredNull(target)
				continue
			}
			fn, err := compile(bt, target)
			if err != nil {
				fn = func(*avroIn, array.Builder) error { return err }
			} else {
				fits++
			}
			branches[i] = fn
		}
		if fits == 0 {
			return nil, fmt.Errorf("field %q: no branch of the Avro union %s fits its type %s", target.Name, w, target.Type)
		}
		return func(in *avroIn, b array.Builder) error {
			i := in.ReadLong()
			if in.Error != nil {
				return in.Error
			}
			if i < 0 || i >= int64(len(branches)) {
				return fmt.Errorf("field %q: union branch %d of %d", target.Name, i, len(branches))
			}
			return branches[i](in, b)
		}, nil
	case *avro.RecordSchema:
		st, ok := target.Type.(*arrow.StructType)
		if !ok {
			return nil, mismatch(w, target)
		}
		rec, err := compileRecord(w, st.Fields())
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", target.Name, err)
		}
		return func(in *avroIn, b array.Builder) error {
			sb := b.(*array.StructBuilder)
			sb.Append(true)
			for _, s := range rec.steps {
				var err error
				if s.dec != nil {
					err = s.dec(in, sb.FieldBuilder(s.col))
				} else {
					err = s.skip(in)
				}
				if err != nil {
					return err
				}
			}
			for _, c := range rec.absent {
				sb.FieldBuilder(c).AppendNull()
			}
			return nil
		}, nil
	case *avro.ArraySchema:
		lt, ok := target.Type.(*arrow.ListType)
		if !ok {
			return nil, mismatch(w, target)
		}
		elem, err := compile(w.Items(), lt.ElemField())
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", target.Name, err)
		}
		return func(in *avroIn, b array.Builder) error {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			vb := lb.ValueBuilder()
			return in.blocks(func() error { return elem(in, vb) })
		}, nil
	case *avro.MapSchema:
		mt, ok := target.Type.(*arrow.MapType)
		if !ok || mt.KeyType().ID() != arrow.STRING {
			return nil, mismatch(w, target)
		}
		val, err := compile(w.Values(), mt.ItemField())
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", target.Name, err)
		}
		return func(in *avroIn, b array.Builder) error {
			mb := b.(*array.MapBuilder)
			mb.Append(true)
			kb, ib := mb.KeyBuilder().(*array.StringBuilder), mb.ItemBuilder()
			return in.blocks(func() error {
				kb.Append(in.ReadString())
				return val(in, ib)
			})
		}, nil
	case *avro.EnumSchema:
		if target.Type.ID() != arrow.STRING {
			return nil, mismatch(w, target)
		}
		syms := w.Symbols()
		return func(in *avroIn, b array.Builder) error {
			i := in.ReadInt()
			if i < 0 || int(i) >= len(syms) {
				return fmt.Errorf("field %q: enum symbol %d of %d", target.Name, i, len(syms))
			}
			b.(*array.StringBuilder).Append(syms[i])
			return nil
		}, nil
	case *avro.FixedSchema:
		return compileFixed(w, target)
	case *avro.NullSchema:
		if !target.Nullable {
			return nil, fmt.Errorf("required field %q is null", target.Name)
		}
		return func(_ *avroIn, b array.Builder) error { b.AppendNull(); return nil }, nil
	case *avro.PrimitiveSchema:
		return compilePrimitive(w, target)
	}
	return nil, mismatch(w, target)
}

func mismatch(w avro.Schema, target arrow.Field) error {
	return fmt.Errorf("field %q: Avro type %s does not fit the column type %s", target.Name, w, target.Type)
}

// requiredNull is the union branch null of a required column: a reject,
// but in a deleted row's image (avroIn.keysOnly), which names its key
// and whose other columns are not data.
func requiredNull(target arrow.Field) decodeFn {
	return func(in *avroIn, b array.Builder) error {
		if !in.keysOnly {
			return fmt.Errorf("required field %q is null", target.Name)
		}
		b.AppendNull()
		return nil
	}
}
