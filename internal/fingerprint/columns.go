package fingerprint

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"

	"github.com/apache/arrow-go/v18/arrow"
)

// A fingerprint hashes its rows column by column: each column's values
// go to streams of their own, each a SHA-256 of its bytes, so a column's
// values are hashed straight from the Arrow buffers where they are laid
// out as the stream wants them (fixed-width values without nulls, the
// bytes of strings), without a copy. A column's streams depend on what
// its type means (its kind), never on how Arrow holds it:
//
//   - fixed width (numbers, decimals, dates, times, timestamps,
//     intervals, fixed-size binary): nulls, and the little-endian bytes
//     of the other values;
//   - strings and binary: nulls, the lengths of the other values
//     (uvarint each), and their bytes;
//   - every other type (booleans, structs, lists, maps, unions, nulls):
//     one stream, each value's canonical bytes ([encoder]: byte 0 for a
//     null, else byte 1 and the value).
//
// The nulls stream holds, for each null, its row's distance from the row
// after the previous null (from the first row for the first null), as a
// uvarint. Every stream decodes uniquely given the row count and the
// column's type, and so does the row sequence from the streams.
type kind uint8

const (
	encodedKind kind = iota
	fixedKind
	varKind
)

// kindOf is the kind of a column of type dt. Types that [appendTypes]
// describes alike have one kind.
func kindOf(dt arrow.DataType) kind {
	for {
		switch t := dt.(type) {
		case *arrow.DictionaryType:
			dt = t.ValueType
			continue
		case *arrow.RunEndEncodedType:
			dt = t.Encoded()
			continue
		case arrow.ExtensionType:
			dt = t.StorageType()
			continue
		case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType,
			*arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType:
			return varKind
		case *arrow.BooleanType, *arrow.NullType:
			return encodedKind
		case arrow.FixedWidthDataType:
			if w := t.BitWidth(); w > 0 && w%8 == 0 {
				return fixedKind
			}
		}
		return encodedKind
	}
}

// stream is a SHA-256 of one stream's bytes, created with its first
// bytes (most columns have no nulls, fixed-width ones no lengths).
type stream struct{ sha hash.Hash }

func (s *stream) write(p []byte) {
	if len(p) == 0 {
		return
	}
	if s.sha == nil {
		s.sha = sha256.New()
	}
	s.sha.Write(p)
}

var emptyDigest = sha256.Sum256(nil)

func (s *stream) appendDigest(dst []byte) []byte {
	if s.sha == nil {
		return append(dst, emptyDigest[:]...)
	}
	return s.sha.Sum(dst)
}

// columnSum is one column's streams in a fingerprint.
type columnSum struct {
	values, nulls, lengths stream
	afterNull              int64 // the row after the last null, in the segment
}

// appendDigests appends the digests of the column's streams: values,
// nulls, lengths.
func (c *columnSum) appendDigests(dst []byte) []byte {
	return c.lengths.appendDigest(c.nulls.appendDigest(c.values.appendDigest(dst)))
}

// rows is a selection of a batch's rows, in order: the range lo to hi,
// or the listed rows when list is not nil.
type rows struct {
	lo, hi int
	list   []int
}

func (r rows) len() int {
	if r.list != nil {
		return len(r.list)
	}
	return r.hi - r.lo
}

func (r rows) at(j int) int {
	if r.list != nil {
		return r.list[j]
	}
	return r.lo + j
}

// scratch is where a column's streams are gathered before they are
// hashed, when they cannot be hashed in place.
type scratch struct{ values, nulls, lengths []byte }

// source is one column of one batch, ready to add selections of its rows
// to a column's streams; first is the selection's first row's number in
// the segment (for the nulls stream).
type source interface {
	add(c *columnSum, sel rows, first int64, s *scratch)
}

// newSource returns a's source: the fast ones of the common flat types,
// the per-value encoder for the rest.
func newSource(a arrow.Array) source {
	if f := flatOf(a); f != nil {
		return f
	}
	return encodedSource{enc: newEncoder(a), kind: kindOf(a.DataType())}
}

// nullAt appends the null of row n of the segment to the nulls stream's
// bytes.
func nullAt(c *columnSum, s *scratch, n int64) {
	s.nulls = binary.AppendUvarint(s.nulls, uint64(n-c.afterNull))
	c.afterNull = n + 1
}

// flush hashes what s gathered into c's streams.
func (s *scratch) flush(c *columnSum) {
	c.values.write(s.values)
	c.nulls.write(s.nulls)
	c.lengths.write(s.lengths)
	s.values, s.nulls, s.lengths = s.values[:0], s.nulls[:0], s.lengths[:0]
}

// add: a range of a fixed-width column without nulls is hashed from the
// values buffer itself.
func (f fixedArray) add(c *columnSum, sel rows, first int64, s *scratch) {
	w := f.w
	if sel.list == nil && f.bits == nil {
		c.values.write(f.raw[sel.lo*w : sel.hi*w])
		return
	}
	for j := range sel.len() {
		i := sel.at(j)
		if f.null(i) {
			nullAt(c, s, first+int64(j))
			continue
		}
		s.values = append(s.values, f.raw[i*w:(i+1)*w]...)
	}
	s.flush(c)
}

// add: the bytes of a range of a string column without nulls are hashed
// from the data buffer itself.
func (v varArray[O]) add(c *columnSum, sel rows, first int64, s *scratch) {
	base := v.offs[0]
	if sel.list == nil && v.bits == nil {
		for i := sel.lo; i < sel.hi; i++ {
			s.lengths = binary.AppendUvarint(s.lengths, uint64(v.offs[i+1]-v.offs[i]))
		}
		c.values.write(v.data[v.offs[sel.lo]-base : v.offs[sel.hi]-base])
		s.flush(c)
		return
	}
	for j := range sel.len() {
		i := sel.at(j)
		if v.null(i) {
			nullAt(c, s, first+int64(j))
			continue
		}
		val := v.data[v.offs[i]-base : v.offs[i+1]-base]
		s.lengths = binary.AppendUvarint(s.lengths, uint64(len(val)))
		s.values = append(s.values, val...)
	}
	s.flush(c)
}

// encodedSource is any column by its values' canonical bytes, split into
// the streams of its kind: a column's streams are the same whichever
// Arrow type holds its values (a dictionary, a run-end encoded or an
// extension array of strings hashes as a string array).
type encodedSource struct {
	enc  encoder
	kind kind
}

func (e encodedSource) add(c *columnSum, sel rows, first int64, s *scratch) {
	for j := range sel.len() {
		i := sel.at(j)
		if e.kind == encodedKind {
			s.values = e.enc(s.values, i)
			continue
		}
		at := len(s.values)
		s.values = e.enc(s.values, i)
		val := s.values[at:]
		switch {
		case val[0] == 0:
			s.values = s.values[:at]
			nullAt(c, s, first+int64(j))
		case e.kind == fixedKind:
			s.values = append(s.values[:at], val[1:]...)
		default: // the length (uvarint) and the bytes
			_, n := binary.Uvarint(val[1:])
			s.lengths = append(s.lengths, val[1:1+n]...)
			s.values = append(s.values[:at], val[1+n:]...)
		}
	}
	s.flush(c)
}
