package table

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
)

// formerFingerprint is the fingerprint the previous format ("f2")
// recorded for rec's rows: the row count and the sum modulo 2^128 of each
// row's SHA-256 truncated to 128 bits (little-endian halves).
func formerFingerprint(rec arrow.RecordBatch) string {
	var hi, lo uint64
	for _, h := range new(fingerprint.Hasher).Hashes(rec, nil) {
		var c uint64
		lo, c = bits.Add64(lo, binary.LittleEndian.Uint64(h[:8]), 0)
		hi, _ = bits.Add64(hi, binary.LittleEndian.Uint64(h[8:16]), c)
	}
	return fmt.Sprintf("f2-%d-%016x%016x", rec.NumRows(), hi, lo)
}

// TestFormerFingerprintPinned: formerFingerprint is the previous format's
// value (pinned by its own stability test before the format changed).
func TestFormerFingerprintPinned(t *testing.T) {
	t.Parallel()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, -3}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", "", "caf\xe9"}, []bool{true, false, true})
	rec := b.NewRecordBatch()
	defer rec.Release()
	assert.Equal(t, "f2-3-a302c0f7e1a63a483be698e16ec1da2c", formerFingerprint(rec))
}

// TestFormerFingerprintsNeverMatch: a partition whose last write recorded
// a fingerprint of the previous format, for exactly the rows of the next
// input, is rewritten once (its fingerprint of this format recorded),
// never skipped; the run after that is Unchanged.
func TestFormerFingerprintsNeverMatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "part", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.String},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "part", Transform: iceberg.IdentityTransform{}})
	ident := catalogtest.CreateTable(t, cat, "t", sch, spec, nil)
	w, err := Open(ctx, cat, ident)
	require.NoError(t, err)
	k, err := w.Key("part=1")
	require.NoError(t, err)
	fields := []arrow.Field{{Name: "part", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}
	input := func() array.RecordReader {
		return catalogtest.Reader(fields, 5, func(b *array.RecordBuilder, i int) {
			b.Field(0).(*array.Int64Builder).Append(1)
			b.Field(1).(*array.StringBuilder).Append(strings.Repeat("x", i))
		})
	}

	// The write the previous format made: these rows, that fingerprint.
	tbl, err := w.head(ctx)
	require.NoError(t, err)
	pspec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	require.NoError(t, err)
	rows := input()
	defer rows.Release()
	res, err := schema.Resolve(rows.Schema(), tbl.Schema(), tbl.NameMapping(), w.cfg.unknown)
	require.NoError(t, err)
	require.True(t, rows.Next())
	rec, err := res.Apply(ctx, rows.RecordBatch())
	require.NoError(t, err)
	former := formerFingerprint(rec)
	st := newStager(ctx, tbl, res.Schema(), w.cfg)
	require.NoError(t, st.writeOnly(pspec, k))
	require.NoError(t, st.add(rec))
	files, err := st.finish()
	require.NoError(t, err)
	parts := []snapshotcommit.Part{{Key: k, Files: files, Fingerprint: former, Rows: 5}}
	_, err = w.commitParts(ctx, "write of the former format", snapshotcommit.KindOverwrite, tbl, pspec, parts, st, false)
	require.NoError(t, err)
	tbl, err = w.Refresh(ctx)
	require.NoError(t, err)
	require.Equal(t, former, LastWrites(tbl, []string{"part=1"})["part=1"].Fingerprint)

	for run, wantUnchanged := range []bool{false, true} {
		rows := input()
		r, err := w.ReplacePartition(ctx, k, rows)
		rows.Release()
		require.NoError(t, err)
		assert.Equal(t, wantUnchanged, r.Unchanged, "run %d after the former format's write", run+1)
	}
	tbl, err = w.Refresh(ctx)
	require.NoError(t, err)
	assert.Len(t, tbl.Metadata().Snapshots(), 2, "one snapshot of the former format, one rewrite")
	assert.True(t, strings.HasPrefix(LastWrites(tbl, []string{"part=1"})["part=1"].Fingerprint, fingerprint.Version+"-"))
}
