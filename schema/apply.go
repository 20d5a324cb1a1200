package schema

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// Apply returns a new batch in the layout of [Resolution.Schema], built from
// rec: columns picked by the mapping, promoted where the types differ, and
// for table columns the input lacks their write-default (format version 3)
// in every row, or nulls when they have none. Arrays whose type already
// matches are shared with rec, not copied. The caller releases the result;
// rec is neither released nor retained.
//
// A null in a required column, at any depth, fails with [ErrMissingRequired]
// naming the column and the first such row. A batch whose schema is not the
// resolved input schema, a value that its promotion cannot hold (a
// timestamp in seconds beyond the microsecond range), and a decimal with
// more digits than its table column's precision (Arrow does not enforce
// precision), at any depth, fail with [ErrIncompatibleType] naming the
// column and the first such row. Memory comes from the allocator
// in ctx (see compute.WithAllocator), or the default allocator.
func (r *Resolution) Apply(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s := rec.Schema(); s != r.in && !s.Equal(r.in) {
		return nil, fmt.Errorf("%w: apply: batch schema differs from the reader's schema, which was resolved (a reader's batches must all have its schema):\nbatch: %s\nresolved: %s",
			ErrIncompatibleType, s, r.in)
	}

	b := builder{ctx: ctx, mem: compute.GetAllocator(ctx)}
	n := int(rec.NumRows())
	cols := make([]arrow.Array, 0, len(r.cols))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()

	for i := range r.cols {
		nd := &r.cols[i]
		var in arrow.Array
		if nd.src >= 0 {
			in = rec.Column(nd.src)
		}
		arr, err := b.build(nd, in, n)
		if err != nil {
			return nil, err
		}
		cols = append(cols, arr)
		if bad, row, ok := firstFailing(requiredRule{}, nd, arr, 0, n, nil, nil); ok {
			return nil, fmt.Errorf("%w: column %q is null at row %d", ErrMissingRequired, bad.path, row)
		}
		if bad, row, ok := firstFailing(precisionRule{}, nd, arr, 0, n, nil, nil); ok {
			return nil, fmt.Errorf("%w: column %q: row %d holds a value of more than %d digits, beyond the column's type %s",
				ErrIncompatibleType, bad.path, row, bad.prec, bad.out)
		}
	}
	return array.NewRecordBatch(r.out, cols, int64(n)), nil
}

// builder builds output arrays for one Apply call.
type builder struct {
	ctx context.Context
	mem memory.Allocator
}

// build returns the output array for nd from in (nil if nd has no input),
// of length n.
func (b builder) build(nd *node, in arrow.Array, n int) (arrow.Array, error) {
	if nd.decode && in != nil {
		values, err := compute.CastArray(b.ctx, in, compute.SafeCastOptions(in.DataType().(*arrow.DictionaryType).ValueType))
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: decode %s: %w", ErrIncompatibleType, nd.path, in.DataType(), err)
		}
		defer values.Release()
		in = values
	}
	switch nd.op {
	case opNull:
		return array.MakeArrayOfNull(b.mem, nd.out, n), nil
	case opDefault:
		return b.fill(nd, n)
	case opSame:
		in.Retain()
		return in, nil
	case opRetype:
		d := in.Data()
		data := array.NewData(nd.out, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
		defer data.Release()
		return array.MakeFromData(data), nil
	case opWrap:
		return array.NewExtensionArrayWithStorage(nd.out.(arrow.ExtensionType), in), nil
	case opCast:
		out, err := compute.CastArray(b.ctx, in, compute.SafeCastOptions(nd.out))
		if err != nil {
			// A value the table type cannot hold (a timestamp in seconds
			// beyond the microsecond range, a large string over 2 GiB).
			return nil, fmt.Errorf("%w: column %q: cast %s to %s: %w", ErrIncompatibleType, nd.path, in.DataType(), nd.out, err)
		}
		return out, nil
	case opNanosToMicros:
		return b.nanosToMicros(nd, in.(*array.Timestamp))
	case opWidenDecimal:
		return b.widenDecimal(nd, in), nil
	case opStruct:
		return b.structArray(nd, in.(*array.Struct))
	case opList:
		return b.list(nd, in.(*array.List))
	case opMap:
		return b.list(nd, in.(*array.Map).List)
	case opLargeList:
		return b.largeList(nd, in.(*array.LargeList))
	}
	panic(fmt.Sprintf("schema: unknown op %d", nd.op))
}

// fill is an array of n copies of nd's write-default.
func (b builder) fill(nd *node, n int) (arrow.Array, error) {
	sc := nd.fill
	ext, isExt := sc.(*scalar.Extension) // uuid: fixed[16] storage, wrapped
	if isExt {
		sc = ext.Value
	}
	arr, err := scalar.MakeArrayFromScalar(sc, n, b.mem)
	if err != nil {
		return nil, fmt.Errorf("%w: column %q: write-default %s: %w", ErrIncompatibleType, nd.path, nd.fill, err)
	}
	if !isExt {
		return arr, nil
	}
	defer arr.Release()
	return array.NewExtensionArrayWithStorage(nd.out.(arrow.ExtensionType), arr), nil
}

func (b builder) structArray(nd *node, in *array.Struct) (arrow.Array, error) {
	n := in.Len()
	kids := make([]arrow.ArrayData, 0, len(nd.children))
	defer func() {
		for _, k := range kids {
			k.Release()
		}
	}()
	for i := range nd.children {
		c := &nd.children[i]
		var src arrow.Array
		if c.src >= 0 {
			src = in.Field(c.src) // sliced to in's offset and length
		}
		arr, err := b.build(c, src, n)
		if err != nil {
			return nil, err
		}
		kids = append(kids, arr.Data())
		arr.Data().Retain()
		arr.Release()
	}

	validity, nulls := b.validity(in.Data())
	if validity != nil {
		defer validity.Release()
	}
	data := array.NewData(nd.out, n, []*memory.Buffer{validity}, kids, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// list builds a list (or map) sharing in's validity and offsets; only the
// element values are resolved.
func (b builder) list(nd *node, in *array.List) (arrow.Array, error) {
	n := in.Len()
	if n == 0 {
		return array.MakeArrayOfNull(b.mem, nd.out, 0), nil
	}
	_, end := in.ValueOffsets(n - 1)
	values := in.ListValues()
	if int(end) < values.Len() {
		values = array.NewSlice(values, 0, end)
		defer values.Release()
	}
	elem, err := b.build(&nd.children[0], values, values.Len())
	if err != nil {
		return nil, err
	}
	defer elem.Release()

	d := in.Data()
	bufs := []*memory.Buffer{d.Buffers()[0], d.Buffers()[1]}
	data := array.NewData(nd.out, n, bufs, []arrow.ArrayData{elem.Data()}, d.NullN(), d.Offset())
	defer data.Release()
	return array.MakeFromData(data), nil
}

// largeList builds a list from a large list, rebasing its offsets to int32.
func (b builder) largeList(nd *node, in *array.LargeList) (arrow.Array, error) {
	n := in.Len()
	if n == 0 {
		return array.MakeArrayOfNull(b.mem, nd.out, 0), nil
	}
	start, _ := in.ValueOffsets(0)
	_, end := in.ValueOffsets(n - 1)
	if end-start > math.MaxInt32 {
		return nil, fmt.Errorf("%w: column %q: large list of %d values does not fit a list",
			ErrIncompatibleType, nd.path, end-start)
	}
	offsets := memory.NewResizableBuffer(b.mem)
	defer offsets.Release()
	offsets.Resize(arrow.Int32Traits.BytesRequired(n + 1))
	offs := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	src := in.Offsets()[in.Data().Offset():]
	for i := range offs {
		offs[i] = int32(src[i] - start)
	}

	values := array.NewSlice(in.ListValues(), start, end)
	defer values.Release()
	elem, err := b.build(&nd.children[0], values, values.Len())
	if err != nil {
		return nil, err
	}
	defer elem.Release()

	validity, nulls := b.validity(in.Data())
	if validity != nil {
		defer validity.Release()
	}
	data := array.NewData(nd.out, n, []*memory.Buffer{validity, offsets}, []arrow.ArrayData{elem.Data()}, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// nanosToMicros converts nanosecond timestamps to microseconds. A value
// with a part below the microsecond fails with ErrIncompatibleType: a
// microsecond column cannot hold it, and writing it floored would store
// another instant than the input's (PyIceberg refuses it as well, unless
// told to downcast). Whole microseconds, DuckDB's TIMESTAMP_NS of
// microsecond data included, convert exactly.
func (b builder) nanosToMicros(nd *node, in *array.Timestamp) (arrow.Array, error) {
	n := in.Len()
	buf := memory.NewResizableBuffer(b.mem)
	defer buf.Release()
	buf.Resize(arrow.TimestampTraits.BytesRequired(n))
	out := arrow.TimestampTraits.CastFromBytes(buf.Bytes())
	for i, v := range in.TimestampValues() {
		if v%1000 != 0 && in.IsValid(i) {
			return nil, fmt.Errorf("%w: column %q: row %d holds %d ns since the epoch, which has nanoseconds a microsecond timestamp column cannot hold (a format v3 table's timestamp_ns column can; or truncate the input to microseconds)",
				ErrIncompatibleType, nd.path, i, int64(v))
		}
		out[i] = v / 1000
	}

	validity, nulls := b.validity(in.Data())
	if validity != nil {
		defer validity.Release()
	}
	data := array.NewData(nd.out, n, []*memory.Buffer{validity, buf}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// widenDecimal converts decimal32 or decimal64 values to decimal128 of the
// same scale; arrow's cast kernels do not.
func (b builder) widenDecimal(nd *node, in arrow.Array) arrow.Array {
	n := in.Len()
	buf := memory.NewResizableBuffer(b.mem)
	defer buf.Release()
	buf.Resize(arrow.Decimal128Traits.BytesRequired(n))
	out := arrow.Decimal128Traits.CastFromBytes(buf.Bytes())
	switch in := in.(type) {
	case *array.Decimal32:
		for i := range out {
			out[i] = decimal128.FromI64(int64(in.Value(i)))
		}
	case *array.Decimal64:
		for i := range out {
			out[i] = decimal128.FromI64(int64(in.Value(i)))
		}
	}

	validity, nulls := b.validity(in.Data())
	if validity != nil {
		defer validity.Release()
	}
	data := array.NewData(nd.out, n, []*memory.Buffer{validity, buf}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// validity returns d's validity bitmap starting at bit 0, and d's null
// count; nil if d has no nulls. The caller releases the buffer. The bitmap
// is shared when d has no offset and copied otherwise.
func (b builder) validity(d arrow.ArrayData) (*memory.Buffer, int) {
	nulls := d.NullN()
	if nulls == 0 || d.Buffers()[0] == nil {
		return nil, 0
	}
	src := d.Buffers()[0]
	if d.Offset() == 0 {
		src.Retain()
		return src, nulls
	}
	buf := memory.NewResizableBuffer(b.mem)
	buf.Resize(int(bitutil.BytesForBits(int64(d.Len()))))
	bitutil.CopyBitmap(src.Bytes(), d.Offset(), d.Len(), buf.Bytes(), 0)
	return buf, nulls
}
