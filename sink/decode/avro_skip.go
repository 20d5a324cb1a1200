package decode

import (
	"fmt"

	"github.com/hamba/avro/v2"
)

// skipper reads a value of w and drops it.
func skipper(w avro.Schema) skipFn {
	switch w := w.(type) {
	case *avro.RefSchema: // a recursive type: resolved on first use
		var fn skipFn
		return func(in *avroIn) error {
			if fn == nil {
				fn = skipper(w.Schema())
			}
			return fn(in)
		}
	case *avro.UnionSchema:
		branches := make([]skipFn, len(w.Types()))
		for i, t := range w.Types() {
			branches[i] = skipper(t)
		}
		return func(in *avroIn) error {
			i := in.ReadLong()
			if in.Error != nil {
				return in.Error
			}
			if i < 0 || i >= int64(len(branches)) {
				return fmt.Errorf("union branch %d of %d", i, len(branches))
			}
			return branches[i](in)
		}
	case *avro.RecordSchema:
		fields := make([]skipFn, len(w.Fields()))
		for i, f := range w.Fields() {
			fields[i] = skipper(f.Type())
		}
		return func(in *avroIn) error {
			for _, f := range fields {
				if err := f(in); err != nil {
					return err
				}
			}
			return nil
		}
	case *avro.ArraySchema:
		item := skipper(w.Items())
		return func(in *avroIn) error { return in.blocks(func() error { return item(in) }) }
	case *avro.MapSchema:
		val := skipper(w.Values())
		return func(in *avroIn) error {
			return in.blocks(func() error { in.SkipString(); return val(in) })
		}
	case *avro.FixedSchema:
		n := w.Size()
		return func(in *avroIn) error { in.SkipNBytes(n); return nil }
	case *avro.EnumSchema:
		return func(in *avroIn) error { in.SkipInt(); return nil }
	case *avro.PrimitiveSchema:
		switch w.Type() {
		case avro.Boolean:
			return func(in *avroIn) error { in.SkipBool(); return nil }
		case avro.Int:
			return func(in *avroIn) error { in.SkipInt(); return nil }
		case avro.Long:
			return func(in *avroIn) error { in.SkipLong(); return nil }
		case avro.Float:
			return func(in *avroIn) error { in.SkipFloat(); return nil }
		case avro.Double:
			return func(in *avroIn) error { in.SkipDouble(); return nil }
		case avro.String:
			return func(in *avroIn) error { in.SkipString(); return nil }
		case avro.Bytes:
			return func(in *avroIn) error { in.SkipBytes(); return nil }
		}
	}
	return func(*avroIn) error { return nil } // null
}
