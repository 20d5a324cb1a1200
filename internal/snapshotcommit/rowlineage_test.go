package snapshotcommit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
)

// lineage is what one snapshot of a v3 table says about row ids.
type lineage struct {
	first, added, next int64 // snapshot first-row-id, added-rows; table next-row-id after it
}

// rowIDs reads (order_id, event_date) -> (_row_id,
// _last_updated_sequence_number) with iceberg-go's scan, which derives
// them from the data files' first_row_id and data sequence number.
func rowIDs(t *testing.T, tbl *icetable.Table) map[string][2]int64 {
	t.Helper()
	_, batches, err := tbl.Scan(icetable.WithSelectedFields("order_id", "event_date", iceberg.RowIDColumnName, iceberg.LastUpdatedSequenceNumberColumnName)).ToArrowRecords(context.Background())
	require.NoError(t, err)
	out := map[string][2]int64{}
	for rec, err := range batches {
		require.NoError(t, err)
		idx := func(name string) int {
			i := rec.Schema().FieldIndices(name)
			require.Len(t, i, 1, "column %s", name)
			return i[0]
		}
		oid, date := rec.Column(idx("order_id")), rec.Column(idx("event_date"))
		rid := rec.Column(idx(iceberg.RowIDColumnName)).(*array.Int64)
		seq := rec.Column(idx(iceberg.LastUpdatedSequenceNumberColumnName)).(*array.Int64)
		for i := 0; i < int(rec.NumRows()); i++ {
			require.False(t, rid.IsNull(i) || seq.IsNull(i), "row %d: null lineage", i)
			k := oid.ValueStr(i) + "@" + date.ValueStr(i)
			_, dup := out[k]
			require.False(t, dup, "row %s twice", k)
			out[k] = [2]int64{rid.Value(i), seq.Value(i)}
		}
		rec.Release()
	}
	return out
}

// TestSnapshotRowLineageV3 replaces partitions of a format v3 table and
// checks the row lineage icerun's snapshots assign, decoded with
// iceberg-go's readers:
//   - each snapshot's first-row-id is the table's next-row-id before it,
//     and next-row-id moves by exactly its added-rows;
//   - every data manifest has a first_row_id, the manifests a snapshot
//     wrote take consecutive ranges from its first-row-id (added plus
//     existing rows long), and the ranges of one snapshot never overlap;
//   - rows of partitions a commit did not replace keep their _row_id and
//     _last_updated_sequence_number, also when their manifest was
//     rewritten or merged; replaced rows get new ids above every earlier
//     one, with the commit's sequence number; no two live rows share an id.
func TestSnapshotRowLineageV3(t *testing.T) {
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", iceberg.Properties{icetable.PropertyFormatVersion: "3"})
	w := openWriter(t, cat, ident)

	content := map[time.Time][]orderdata.Order{}
	var steps []lineage
	step := func(name string, apply func()) {
		t.Helper()
		before := load(t, cat, ident)
		oldIDs := map[string][2]int64{}
		if before.CurrentSnapshot() != nil {
			oldIDs = rowIDs(t, before)
		}
		apply()
		after := load(t, cat, ident)
		snap := after.CurrentSnapshot()
		require.NotNil(t, snap.FirstRowID, "%s: first-row-id", name)
		require.NotNil(t, snap.AddedRows, "%s: added-rows", name)
		assert.Equal(t, before.Metadata().NextRowID(), *snap.FirstRowID, "%s: first-row-id = next-row-id before", name)
		assert.Equal(t, *snap.FirstRowID+*snap.AddedRows, after.Metadata().NextRowID(), "%s: next-row-id = first-row-id + added-rows", name)
		steps = append(steps, lineage{*snap.FirstRowID, *snap.AddedRows, after.Metadata().NextRowID()})

		// manifest ranges
		var assigned int64
		type span struct{ lo, hi int64 }
		var spans []span
		for _, mf := range manifests(t, after, snap) {
			if mf.ManifestContent() != iceberg.ManifestContentData {
				assert.Nil(t, mf.FirstRowID(), "%s: delete manifest %s: first_row_id", name, mf.FilePath())
				continue
			}
			require.NotNil(t, mf.FirstRowID(), "%s: data manifest %s: first_row_id", name, mf.FilePath())
			lo, n := *mf.FirstRowID(), mf.AddedRows()+mf.ExistingRows()
			spans = append(spans, span{lo, lo + n})
			if mf.SnapshotID() == snap.SnapshotID {
				assert.GreaterOrEqual(t, lo, *snap.FirstRowID, "%s: new manifest %s below first-row-id", name, mf.FilePath())
				assigned += n
			} else {
				assert.Less(t, lo, *snap.FirstRowID, "%s: kept manifest %s: first_row_id reassigned", name, mf.FilePath())
			}
		}
		assert.Equal(t, *snap.AddedRows, assigned, "%s: added-rows = added+existing rows of the manifests it wrote", name)
		for i, a := range spans {
			for _, b := range spans[i+1:] {
				assert.False(t, a.lo < b.hi && b.lo < a.hi && a.hi > a.lo && b.hi > b.lo, "%s: manifest ranges %v and %v overlap", name, a, b)
			}
		}

		// row ids
		ids := rowIDs(t, after)
		seen := map[int64]string{}
		for k, v := range ids {
			if o, dup := seen[v[0]]; dup {
				t.Errorf("%s: rows %s and %s share _row_id %d", name, o, k, v[0])
			}
			seen[v[0]] = k
			if old, ok := oldIDs[k]; ok && v[1] != snap.SequenceNumber {
				assert.Equal(t, old, v, "%s: row %s of an untouched partition: (_row_id, _last_updated_sequence_number)", name, k)
				continue
			}
			assert.GreaterOrEqual(t, v[0], *snap.FirstRowID, "%s: new row %s: _row_id", name, k)
			assert.Less(t, v[0], after.Metadata().NextRowID(), "%s: new row %s: _row_id", name, k)
			assert.Equal(t, snap.SequenceNumber, v[1], "%s: new row %s: _last_updated_sequence_number", name, k)
		}
		var want int
		for _, os := range content {
			want += len(os)
		}
		assert.Len(t, ids, want, "%s: rows", name)
	}

	content[day(0)] = orderdata.Day(day(0), 20)
	step("replace day0", func() { replaceDay(t, w, day(0), content[day(0)]) })
	content[day(1)], content[day(2)] = orderdata.Day(day(1), 21), orderdata.Day(day(2), 22)
	step("add day1, day2", func() { replaceDays(t, w, append(content[day(1)], content[day(2)]...)) })
	content[day(1)] = repriced(content[day(1)], 8)
	// rewrites the manifest of day1 and day2: day2's entry becomes EXISTING
	step("replace day1", func() { replaceDay(t, w, day(1), content[day(1)]) })
	for i := 3; i < 3+10; i++ { // small manifests merged on the way
		content[day(i)] = orderdata.Day(day(i), 5)
		step(fmt.Sprintf("add day%d", i), func() { replaceDay(t, w, day(i), content[day(i)]) })
	}
	delete(content, day(2))
	step("empty day2", func() { replaceDay(t, w, day(2), nil) })

	assert.Equal(t, string(expected(t, cat, flatten(content))), string(catalogtest.CanonicalScan(t, cat, ident)), "canonical scan")
	assert.Equal(t, int64(0), steps[0].first, "first snapshot of an empty v3 table starts at row id 0")
	assert.Equal(t, int64(20), steps[0].added, "first snapshot: added-rows")
}
