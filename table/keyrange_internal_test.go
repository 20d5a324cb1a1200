package table

import (
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func boundsFile(t *testing.T, lo, hi []byte) iceberg.DataFile {
	t.Helper()
	b, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentData, "f.parquet", iceberg.ParquetFile, nil, nil, nil, 1, 1)
	require.NoError(t, err)
	if lo != nil {
		b.LowerBoundValues(map[int][]byte{1: lo}).UpperBoundValues(map[int][]byte{1: hi})
	}
	return b.Build()
}

func le64(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
func le32(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }

// keyBatch is a one-column batch "k" of arr.
func keyBatch(arr arrow.Array) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arr.DataType(), Nullable: true}}, nil)
	return array.NewRecordBatch(sc, []arrow.Array{arr}, int64(arr.Len()))
}

func TestKeyRangeMayHold(t *testing.T) {
	t.Parallel()
	mem := memory.NewGoAllocator()
	longs := func(vs ...int64) *keyRange {
		b := array.NewInt64Builder(mem)
		b.AppendValues(vs, nil)
		r := newKeyRange([]string{"k"})
		r.add(keyBatch(b.NewArray()))
		return r
	}
	r := longs(-5, 40, 7)
	assert.True(t, r.mayHold(boundsFile(t, le64(-10), le64(-1)), 1), "[-10,-1] holds -5")
	assert.False(t, r.mayHold(boundsFile(t, le64(-4), le64(6)), 1), "[-4,6] holds none of -5, 7, 40")
	assert.True(t, r.mayHold(boundsFile(t, le64(7), le64(7)), 1), "[7,7] holds 7")
	assert.False(t, r.mayHold(boundsFile(t, le64(41), le64(1000)), 1), "[41,1000]")
	assert.True(t, r.mayHold(boundsFile(t, le32(30), le32(50)), 1), "4-byte bounds of an int promoted to long: [30,50] holds 40")
	assert.False(t, r.mayHold(boundsFile(t, le32(8), le32(39)), 1), "4-byte bounds [8,39]")
	assert.True(t, r.mayHold(boundsFile(t, nil, nil), 1), "a file without bounds")
	assert.True(t, r.mayHold(boundsFile(t, []byte{1, 2}, []byte{3, 4}), 1), "bounds of an unknown width")

	tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
	tb.AppendValues([]arrow.Timestamp{1_000_000}, nil)
	ts := newKeyRange([]string{"k"})
	ts.add(keyBatch(tb.NewArray()))
	assert.True(t, ts.mayHold(boundsFile(t, le32(0), le32(1)), 1), "4-byte bounds of a timestamp key (a promoted date) are not read")
	assert.False(t, ts.mayHold(boundsFile(t, le64(0), le64(999_999)), 1), "timestamp bounds below the key")

	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"banana", "cherry"}, nil)
	s := newKeyRange([]string{"k"})
	s.add(keyBatch(sb.NewArray()))
	assert.True(t, s.mayHold(boundsFile(t, []byte("b"), []byte("bb")), 1), "truncated bounds [b, bb] hold banana")
	assert.False(t, s.mayHold(boundsFile(t, []byte("c"), []byte("ch")), 1), "[c, ch] holds neither")
	assert.False(t, s.mayHold(boundsFile(t, []byte("d"), []byte("z")), 1), "[d, z]")

	nb := array.NewInt64Builder(mem)
	nb.AppendValues([]int64{1, 0}, []bool{true, false})
	n := newKeyRange([]string{"k"})
	n.add(keyBatch(nb.NewArray()))
	assert.True(t, n.mayHold(boundsFile(t, le64(100), le64(200)), 1), "a null key turns pruning off")

	fb := array.NewFloat64Builder(mem)
	fb.AppendValues([]float64{1}, nil)
	f := newKeyRange([]string{"k"})
	f.add(keyBatch(fb.NewArray()))
	assert.True(t, f.mayHold(boundsFile(t, le64(100), le64(200)), 1), "a double key does not prune")
}
