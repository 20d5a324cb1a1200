package partition

import (
	"errors"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
)

// fuzzValue is the raw material of one source value: hi and lo make
// integers, floats (by their bits), decimals (hi:lo as 128 bits), dates,
// times and timestamps; s makes strings, raw bytes binaries and fixed
// and uuid values.
type fuzzValue struct {
	hi  int64
	lo  uint64
	s   string
	raw []byte
}

// sourceColumns maps a test field's source column to the top-level column
// of testSchema holding it.
var sourceColumns = map[int]string{1: "b", 2: "i", 3: "l", 4: "f", 5: "d", 6: "dec", 7: "dt", 8: "t",
	9: "ts", 10: "tstz", 11: "tsns", 12: "tstzns", 13: "s", 14: "u", 15: "fx", 16: "bin", 18: "st", 19: "dec0"}

// appendFuzz appends v to b, a builder of the Arrow type of a testSchema column.
func appendFuzz(b array.Builder, v fuzzValue) {
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(v.hi&1 == 1)
	case *array.Int32Builder:
		b.Append(int32(v.hi))
	case *array.Int64Builder:
		b.Append(v.hi)
	case *array.Float32Builder:
		b.Append(math.Float32frombits(uint32(v.lo)))
	case *array.Float64Builder:
		b.Append(math.Float64frombits(v.lo))
	case *array.Decimal128Builder:
		b.Append(decimal128.New(v.hi, v.lo))
	case *array.Date32Builder:
		b.Append(arrow.Date32(v.hi))
	case *array.Time64Builder:
		b.Append(arrow.Time64(v.hi))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.hi))
	case *array.StringBuilder:
		b.Append(v.s)
	case *extensions.UUIDBuilder:
		var u uuid.UUID
		copy(u[:], v.raw)
		b.Append(u)
	case *array.FixedSizeBinaryBuilder:
		fx := make([]byte, b.Type().(*arrow.FixedSizeBinaryType).ByteWidth)
		copy(fx, v.raw)
		b.Append(fx)
	case *array.BinaryBuilder:
		b.Append(v.raw)
	case *array.StructBuilder:
		b.Append(true)
		appendFuzz(b.FieldBuilder(0), v)
	default:
		panic("appendFuzz: unexpected builder " + b.Type().String())
	}
}

// fuzzRecord is a batch of the source column of the only field of s, with
// the value v in row 0 and row 1, and null in row 2.
func fuzzRecord(t testing.TB, s *Spec, v fuzzValue) arrow.RecordBatch {
	col := "s"
	if f := s.fields[0]; f.tk != transformVoid {
		col = sourceColumns[f.sourceID]
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrowSchema(t, col))
	defer b.Release()
	appendFuzz(b.Field(0), v)
	appendFuzz(b.Field(0), v)
	b.Field(0).AppendNull()

	return b.NewRecordBatch()
}

func addValueSeeds(f *testing.F) {
	his := []int64{0, -1, 1, math.MinInt64, math.MaxInt64, math.MinInt32, math.MaxInt32, math.MinInt32 - 1,
		-99_999_999_999, 1 << 40, 253402300800000000, -62135596800000001}
	los := []uint64{0, math.MaxUint64, 1 << 63, 0x7ff8000000000001}
	strs := []string{"", "\xff\xfe", "a/../../etc", "..", "null", "été", "\x00"}
	raws := [][]byte{nil, {0xff}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}
	for i := range testFields {
		for j, hi := range his {
			f.Add(uint8(i), hi, los[j%len(los)], strs[j%len(strs)], raws[j%len(raws)])
		}
	}
}

// FuzzRowKeys feeds every transform of every source type extreme values
// (decimals of any 128 bits, far timestamps, times beyond a day, invalid
// UTF-8, any bytes). RowKeys, Check and Mask never panic; they fail only
// with ErrBadValue (RowKeys, Check, Mask) or ErrRowOutside (Check). A key
// RowKeys returns parses back from its text to itself, and the Matcher of
// that key accepts the rows it was computed from.
func FuzzRowKeys(f *testing.F) {
	addValueSeeds(f)
	specs := make([]*Spec, len(testFields))
	for i, tf := range testFields {
		specs[i] = newTestSpec(f, 0, tf)
	}
	f.Fuzz(func(t *testing.T, which uint8, hi int64, lo uint64, s string, raw []byte) {
		spec := specs[int(which)%len(specs)]
		rec := fuzzRecord(t, spec, fuzzValue{hi: hi, lo: lo, s: s, raw: raw})
		defer rec.Release()
		name := spec.fields[0].name

		// Another key of the spec: the Matcher meets a row outside it.
		other, err := spec.Parse(name + "=null")
		if err != nil {
			t.Fatalf("Parse(%s=null) = %v", name, err)
		}
		m, err := spec.Matcher(other, rec.Schema())
		if err != nil {
			t.Fatalf("Matcher(%s) = %v", other, err)
		}
		if err := m.Check(rec); err != nil && !errors.Is(err, ErrRowOutside) && !errors.Is(err, ErrBadValue) {
			t.Fatalf("%s: Check(%s) = %v, want nil, ErrRowOutside or ErrBadValue", name, other, err)
		}
		if _, err := m.Mask(rec); err != nil && !errors.Is(err, ErrBadValue) {
			t.Fatalf("%s: Mask(%s) = %v, want nil or ErrBadValue", name, other, err)
		}

		keys, rowKey, err := spec.RowKeys(rec)
		if err != nil {
			if !errors.Is(err, ErrBadValue) {
				t.Fatalf("%s: RowKeys(%v) = %v, want nil or ErrBadValue", name, rec.Column(0), err)
			}
			return
		}
		k := keys[rowKey[0]]
		back, err := spec.Parse(k.String())
		if err != nil || back != k {
			t.Fatalf("%s: RowKeys(%v) gave %q, which parses to %q, %v", name, rec.Column(0), k, back, err)
		}
		m, err = spec.Matcher(k, rec.Schema())
		if err != nil {
			t.Fatalf("Matcher(%s) = %v", k, err)
		}
		row0, row1 := rec.NewSlice(0, 2), rec.NewSlice(1, 2)
		defer row0.Release()
		defer row1.Release()
		for _, r := range []arrow.RecordBatch{row0, row1} {
			if err := m.Check(r); err != nil {
				t.Fatalf("%s: Check(%v) against the key RowKeys gave, %s: %v", name, r.Column(0), k, err)
			}
		}
	})
}
