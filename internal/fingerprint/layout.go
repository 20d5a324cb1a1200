package fingerprint

import (
	"encoding/binary"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// layout holds the canonical bytes of every row of one batch in one
// buffer: row i is buf[start[i]:start[i]+lens[i]]. A row's canonical bytes are
// the concatenation of its columns' values, each:
//
//   - a null: byte 0;
//   - otherwise byte 1, then the value: the little-endian bytes of a
//     fixed-width value (integers, floats as their bits, decimals, dates,
//     times, timestamps, intervals, fixed-size binary); one byte for a
//     boolean; the length (uvarint) and bytes of a string or binary; the
//     fields of a struct in order; the element count (uvarint) and elements
//     of a list or map (keys and values in turn); the type code and value
//     of a union; a dictionary or run-end encoded value as its value; an
//     extension value as its storage.
//
// Every value is self-delimiting given the schema, so two different rows
// of one schema never encode to the same bytes.
//
// The layout is built column by column (the sizes of every row, then
// each column's values written in place), so a flat column's type is
// looked at once per batch, not once per value; [encoder] encodes the
// values of the other types one by one.
//
// Rows are placed one after the other in input order, each followed by
// its SHA-256 padding (see [rowHasher]), up to the next multiple of 64
// bytes, so each row is hashed as its own message.
type layout struct {
	buf   []byte
	start []int // where each row starts in buf
	lens  []int // the rows' lengths
	pos   []int // the write position of each row while columns are written
	cols  []column
}

// column is one column's part of a layout: size adds each row's byte
// count to lens; write writes each row's bytes at pos and advances it.
type column interface {
	size(lens []int)
	write(buf []byte, pos []int)
}

// build lays out the rows of rec, each padded.
func (l *layout) build(rec arrow.RecordBatch) {
	n := int(rec.NumRows())
	l.cols = l.cols[:0]
	for _, a := range rec.Columns() {
		l.cols = append(l.cols, newColumn(a))
	}
	l.lens = resize(l.lens, n)
	clear(l.lens)
	for _, c := range l.cols {
		c.size(l.lens)
	}
	l.start = resize(l.start, n)
	end := 0
	for i, m := range l.lens {
		l.start[i] = end
		end += paddedLen(m)
	}
	l.buf = resize(l.buf, end)
	l.pos = resize(l.pos, n)
	copy(l.pos, l.start)
	for _, c := range l.cols {
		c.write(l.buf, l.pos)
	}
	for i, m := range l.lens {
		pad(l.padded(i), m)
	}
}

// row is the canonical bytes of row i.
func (l *layout) row(i int) []byte { return l.buf[l.start[i] : l.start[i]+l.lens[i]] }

// padded is row i with its SHA-256 padding.
func (l *layout) padded(i int) []byte {
	return l.buf[l.start[i] : l.start[i]+paddedLen(l.lens[i])]
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// newColumn returns the fast layout of the common flat types and the
// per-value [encoder] of every other one.
func newColumn(a arrow.Array) column {
	if a.Len() == 0 {
		return noRows{}
	}
	if b, ok := a.(*array.Boolean); ok {
		return boolColumn{validity: validityOf(a), a: b}
	}
	if f := flatOf(a); f != nil {
		return f
	}
	return &encodedColumn{enc: newEncoder(a)}
}

// flat is a column of one of the common flat types, whose values are
// read straight from its buffers: a layout column and a stream source.
type flat interface {
	column
	source
}

// flatOf is a as a flat column, or nil when a's values are not laid out
// flat (a dictionary's type has its index width; views, run-end encoded
// and extension arrays, booleans and nested types go value by value).
func flatOf(a arrow.Array) flat {
	v := validityOf(a)
	switch a := a.(type) {
	case *array.Dictionary, *array.RunEndEncoded, array.ExtensionArray, *array.StringView, *array.BinaryView, *array.Boolean:
		return nil
	case *array.String:
		return varArray[int32]{validity: v, data: a.ValueBytes(), offs: a.ValueOffsets()}
	case *array.LargeString:
		return varArray[int64]{validity: v, data: a.ValueBytes(), offs: a.ValueOffsets()}
	case *array.Binary:
		return varArray[int32]{validity: v, data: a.ValueBytes(), offs: a.ValueOffsets()}
	case *array.LargeBinary:
		return varArray[int64]{validity: v, data: a.ValueBytes(), offs: a.ValueOffsets()}
	}
	if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok && fw.BitWidth()%8 == 0 && fw.BitWidth() > 0 {
		w := fw.BitWidth() / 8
		return fixedArray{validity: v, raw: fixedValues(a, w), w: w}
	}
	return nil
}

type noRows struct{}

func (noRows) size([]int)          {}
func (noRows) write([]byte, []int) {}

// validity is a column's null bitmap; bits is nil when no value is null.
type validity struct {
	bits []byte
	off  int
}

// validityOf is a's null bitmap.
func validityOf(a arrow.Array) validity {
	if a.NullN() == 0 {
		return validity{}
	}
	return validity{bits: a.NullBitmapBytes(), off: a.Data().Offset()}
}

// fixedValues is the values buffer of a fixed-width array of w-byte
// values, from the array's first value; nil when absent (only when every
// value is null, so it is never read).
func fixedValues(a arrow.Array, w int) []byte {
	if bufs := a.Data().Buffers(); len(bufs) > 1 && bufs[1] != nil {
		return bufs[1].Bytes()[a.Data().Offset()*w:]
	}
	return nil
}

func (v validity) null(i int) bool { return v.bits != nil && !bitutil.BitIsSet(v.bits, v.off+i) }

// marker writes row i's null marker at pos[i] and advances it; it
// reports whether a value follows.
func (v validity) marker(buf []byte, pos []int, i int) bool {
	p := pos[i]
	pos[i] = p + 1
	if v.null(i) {
		buf[p] = 0
		return false
	}
	buf[p] = 1
	return true
}

// fixedArray is a fixed-width array. In a layout: byte 1 and the value's
// w little-endian bytes, or byte 0.
type fixedArray struct {
	validity
	raw []byte
	w   int
}

func (c fixedArray) size(lens []int) {
	if c.bits == nil {
		for i := range lens {
			lens[i] += 1 + c.w
		}
		return
	}
	for i := range lens {
		if c.null(i) {
			lens[i]++
		} else {
			lens[i] += 1 + c.w
		}
	}
}

func (c fixedArray) write(buf []byte, pos []int) {
	w := c.w
	if c.bits == nil && w == 8 { // the common case, without a branch per value
		for i, p := range pos {
			buf[p] = 1
			binary.LittleEndian.PutUint64(buf[p+1:p+9], binary.LittleEndian.Uint64(c.raw[i*8:i*8+8]))
			pos[i] = p + 9
		}
		return
	}
	for i := range pos {
		if !c.marker(buf, pos, i) {
			continue
		}
		p := pos[i]
		switch w {
		case 8:
			binary.LittleEndian.PutUint64(buf[p:], binary.LittleEndian.Uint64(c.raw[i*8:]))
		case 4:
			binary.LittleEndian.PutUint32(buf[p:], binary.LittleEndian.Uint32(c.raw[i*4:]))
		default:
			copy(buf[p:p+w], c.raw[i*w:])
		}
		pos[i] = p + w
	}
}

// varArray is a string or binary array. In a layout: byte 1, the length
// (uvarint) and the bytes, or byte 0. data is the array's ValueBytes,
// which starts at its first value (offs[0]) when the array is a slice,
// while its offsets stay those of the whole buffer.
type varArray[O int32 | int64] struct {
	validity
	data []byte
	offs []O
}

func (c varArray[O]) size(lens []int) {
	for i := range lens {
		if c.null(i) {
			lens[i]++
			continue
		}
		n := uint64(c.offs[i+1] - c.offs[i])
		lens[i] += 1 + uvarintLen(n) + int(n)
	}
}

func (c varArray[O]) write(buf []byte, pos []int) {
	base := c.offs[0]
	for i := range pos {
		if !c.marker(buf, pos, i) {
			continue
		}
		v := c.data[c.offs[i]-base : c.offs[i+1]-base]
		p := pos[i] + binary.PutUvarint(buf[pos[i]:], uint64(len(v)))
		pos[i] = p + copy(buf[p:], v)
	}
}

func uvarintLen(n uint64) int { return max(1, (bits.Len64(n)+6)/7) }

// boolColumn: byte 1 and byte 0 or 1, or byte 0.
type boolColumn struct {
	validity
	a *array.Boolean
}

func (c boolColumn) size(lens []int) {
	for i := range lens {
		if c.null(i) {
			lens[i]++
		} else {
			lens[i] += 2
		}
	}
}

func (c boolColumn) write(buf []byte, pos []int) {
	for i := range pos {
		if !c.marker(buf, pos, i) {
			continue
		}
		buf[pos[i]] = 0
		if c.a.Value(i) {
			buf[pos[i]] = 1
		}
		pos[i]++
	}
}

// encodedColumn is any other type (nested, dictionary, run-end encoded,
// views, unions, extensions): each value encoded by its [encoder] into a
// buffer of its own, then copied into place.
type encodedColumn struct {
	enc  encoder
	buf  []byte
	offs []int
}

func (c *encodedColumn) size(lens []int) {
	c.offs = append(c.offs[:0], 0)
	for i := range lens {
		c.buf = c.enc(c.buf, i)
		c.offs = append(c.offs, len(c.buf))
		lens[i] += c.offs[i+1] - c.offs[i]
	}
}

func (c *encodedColumn) write(buf []byte, pos []int) {
	for i, p := range pos {
		pos[i] = p + copy(buf[p:], c.buf[c.offs[i]:c.offs[i+1]])
	}
}
