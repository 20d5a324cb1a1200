package table

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// checkRow is one row of a contentCheck test: id, name (nil: null) and
// its lineage.
type checkRow struct {
	id     int64
	name   *string
	rowID  int64
	seqNum int64
}

// checkBatch is rows as a batch, ending with the lineage columns when
// lineage.
func checkBatch(rows []checkRow, lineage bool) arrow.RecordBatch {
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}
	if lineage {
		fields = append(fields, arrow.Field{Name: "_row_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: "_last_updated_sequence_number", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.id)
		if r.name == nil {
			b.Field(1).(*array.StringBuilder).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(*r.name)
		}
		if lineage {
			b.Field(2).(*array.Int64Builder).Append(r.rowID)
			b.Field(3).(*array.Int64Builder).Append(r.seqNum)
		}
	}
	return b.NewRecordBatch()
}

// summary is the contentCheck of rows, added in batches of at most per.
func summary(rows []checkRow, lineage bool, per int) contentCheck {
	c := contentCheck{lineage: lineage}
	for lo := 0; lo < len(rows); lo += per {
		rec := checkBatch(rows[lo:min(lo+per, len(rows))], lineage)
		c.add(rec)
		rec.Release()
	}
	return c
}

// A compaction's check: the same rows in any order and any batches sum
// alike; a lost, duplicated or changed row, a null for an empty string, or
// (with lineage) a _row_id or sequence number moved to another row does
// not.
func TestContentCheck(t *testing.T) {
	str := func(s string) *string { return &s }
	rows := []checkRow{{1, str("a"), 10, 3}, {2, str(""), 11, 3}, {3, nil, 12, 4}, {4, str("a"), 13, 4}, {5, str("bb"), 14, 5}}
	reversed := []checkRow{rows[4], rows[3], rows[2], rows[1], rows[0]}
	edit := func(f func(r []checkRow) []checkRow) []checkRow { return f(append([]checkRow(nil), rows...)) }
	for _, lineage := range []bool{false, true} {
		base := summary(rows, lineage, 5)
		for name, same := range map[string]contentCheck{
			"the same rows in two batches": summary(rows, lineage, 2),
			"reversed, one row a batch":    summary(reversed, lineage, 1),
		} {
			if same.rows != base.rows || same.sum != base.sum {
				t.Errorf("lineage %v: %s: %d rows %x, want %d rows %x", lineage, name, same.rows, same.sum, base.rows, base.sum)
			}
		}
		differ := map[string][]checkRow{
			"a row lost":               edit(func(r []checkRow) []checkRow { return r[1:] }),
			"a row twice, one lost":    edit(func(r []checkRow) []checkRow { r[1] = r[0]; return r }),
			"a value changed":          edit(func(r []checkRow) []checkRow { r[4].name = str("bc"); return r }),
			"a null for an empty text": edit(func(r []checkRow) []checkRow { r[1].name = nil; return r }),
		}
		if lineage {
			differ["two _row_ids swapped"] = edit(func(r []checkRow) []checkRow { r[0].rowID, r[1].rowID = r[1].rowID, r[0].rowID; return r })
			differ["a sequence number moved"] = edit(func(r []checkRow) []checkRow { r[2].seqNum, r[4].seqNum = r[4].seqNum, r[2].seqNum; return r })
		}
		for name, d := range differ {
			if got := summary(d, lineage, 3); got.rows == base.rows && got.sum == base.sum {
				t.Errorf("lineage %v: %s: the check did not change (%d rows, %x)", lineage, name, got.rows, got.sum)
			}
		}
	}
}
