package table_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/table"
)

// nonceSchema is the table of the forged inputs: rows (part, id, nonce),
// partitioned by part.
var nonceSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "part", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 3, Name: "nonce", Type: iceberg.PrimitiveTypes.Int64, Required: true},
)

var nonceFields = []arrow.Field{{Name: "part", Type: arrow.PrimitiveTypes.Int64}, {Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "nonce", Type: arrow.PrimitiveTypes.Int64}}

func nonceTable(t *testing.T) (catalog.Catalog, icetable.Identifier) {
	cat, _ := catalogtest.New(t)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "part", Transform: iceberg.IdentityTransform{}})
	return cat, catalogtest.CreateTable(t, cat, "t", nonceSchema, spec, nil)
}

// nonceRows is a reader of the rows (part(i), i, nonce(i)) for i below n,
// in batches of at most batch rows.
func nonceRows(n, batch int, part, nonce func(i int) int64) array.RecordReader {
	sc := arrow.NewSchema(nonceFields, nil)
	var recs []arrow.RecordBatch
	for start := 0; start < n; start += batch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for i := start; i < min(n, start+batch); i++ {
			b.Field(0).(*array.Int64Builder).Append(part(i))
			b.Field(1).(*array.Int64Builder).Append(int64(i))
			b.Field(2).(*array.Int64Builder).Append(nonce(i))
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	rdr, err := array.NewRecordReader(sc, recs)
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		r.Release()
	}
	return rdr
}

// TestReplacePartitionRefusesAForgedCollision: two inputs of 512 rows,
// different in every row, whose sums of 128-bit row hashes are equal
// (found by a generalized-birthday search in about 5 million SHA-256
// evaluations, see internal/fingerprint/forgery_test.go), are two inputs:
// the second replace is not Unchanged and the partition holds it. Under
// the former fingerprint (that sum) the second replace was Unchanged and
// the partition kept the first input.
func TestReplacePartitionRefusesAForgedCollision(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../internal/fingerprint/testdata/additive_collision.json")
	require.NoError(t, err)
	var forged struct{ Nonces []int64 }
	require.NoError(t, json.Unmarshal(b, &forged))
	require.Len(t, forged.Nonces, 512)

	cat, ident := nonceTable(t)
	w := open(t, cat, ident)
	k := key(t, w, "part=1")
	replace := func(nonce func(i int) int64) bool {
		rows := nonceRows(len(forged.Nonces), 100, func(int) int64 { return 1 }, nonce)
		defer rows.Release()
		res, err := w.ReplacePartition(context.Background(), k, rows)
		require.NoError(t, err)
		return res.Unchanged
	}
	require.False(t, replace(func(i int) int64 { return forged.Nonces[i] }))
	assert.False(t, replace(func(int) int64 { return 0 }), "a different input, forged to collide with the former fingerprint, was taken for the partition's content")
	scan := string(catalogtest.CanonicalScan(t, cat, ident))
	for _, line := range strings.Split(strings.TrimSpace(scan), "\n") {
		if !strings.HasSuffix(line, "|0") {
			t.Fatalf("the table holds row %q of the first input, want the second input's rows (nonce 0)", line)
		}
	}
	assert.True(t, replace(func(int) int64 { return 0 }), "the same input again")
}

// TestStaticAndDynamicRecordOneFingerprint: a partition's rows, in one
// order, have one fingerprint whether they came in a static replace or in
// a dynamic one that interleaves them with other partitions' rows, in any
// batching: a static rerun of a dynamic write is Unchanged. The same
// rows in another order are another input (a new snapshot of the same
// rows).
func TestStaticAndDynamicRecordOneFingerprint(t *testing.T) {
	t.Parallel()
	cat, ident := nonceTable(t)
	w := open(t, cat, ident)
	const n = 1000
	part := func(i int) int64 { return int64(i*7%3 + 1) } // partitions 1, 2, 3 interleaved
	nonce := func(i int) int64 { return int64(i * i % 97) }
	rows := nonceRows(n, 64, part, nonce)
	res, err := w.ReplacePartitions(context.Background(), rows)
	rows.Release()
	require.NoError(t, err)
	require.Len(t, res.Partitions, 3)
	tbl, err := w.Refresh(context.Background())
	require.NoError(t, err)
	dynamic := table.LastWrites(tbl, []string{"part=2"})["part=2"].Fingerprint
	require.True(t, strings.HasPrefix(dynamic, fingerprint.Version+"-"), "fingerprint %q", dynamic)

	// Partition 2's rows alone, in their order, in other batches.
	var ids []int
	for i := range n {
		if part(i) == 2 {
			ids = append(ids, i)
		}
	}
	only := func(batch int, order []int) array.RecordReader {
		sc := arrow.NewSchema(nonceFields, nil)
		var recs []arrow.RecordBatch
		for start := 0; start < len(order); start += batch {
			b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			for _, i := range order[start:min(len(order), start+batch)] {
				b.Field(0).(*array.Int64Builder).Append(2)
				b.Field(1).(*array.Int64Builder).Append(int64(i))
				b.Field(2).(*array.Int64Builder).Append(nonce(i))
			}
			recs = append(recs, b.NewRecordBatch())
			b.Release()
		}
		rdr, err := array.NewRecordReader(sc, recs)
		require.NoError(t, err)
		for _, r := range recs {
			r.Release()
		}
		return rdr
	}
	k := key(t, w, "part=2")
	for _, batch := range []int{1, 7, 333, 1000} {
		rows := only(batch, ids)
		res, err := w.ReplacePartition(context.Background(), k, rows)
		rows.Release()
		require.NoError(t, err)
		assert.True(t, res.Unchanged, "static replace of the dynamic write's rows, batches of %d", batch)
	}
	reversed := make([]int, len(ids))
	for i, id := range ids {
		reversed[len(ids)-1-i] = id
	}
	rows = only(50, reversed)
	res, err = w.ReplacePartition(context.Background(), k, rows)
	rows.Release()
	require.NoError(t, err)
	assert.False(t, res.Unchanged, "the same rows reversed")
}
