package partition

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkRowKeysDate routes 1M rows of an identity date partition in
// 8,192-row batches, as a dynamic replace does, the days in runs of 100k
// rows (the peer bench's daily orders).
func BenchmarkRowKeysDate(b *testing.B) {
	const rows, batch = 1 << 20, 8192
	s := fieldSpec(b, "dt")
	sc := arrowSchema(b, "dt")
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer bld.Release()
	db := bld.Field(0).(*array.Date32Builder)
	var recs []arrow.RecordBatch
	for i := range rows {
		db.Append(arrow.Date32(20648 + i/100_000))
		if (i+1)%batch == 0 {
			recs = append(recs, bld.NewRecordBatch())
		}
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	b.SetBytes(rows * 4)
	b.ResetTimer()
	for range b.N {
		for _, rec := range recs {
			if _, _, err := s.RowKeys(rec); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCheckDay checks 1M rows of day(timestamp), all in the key.
func BenchmarkCheckDay(b *testing.B) {
	const rows = 1 << 20
	s := fieldSpec(b, "ts_day")
	k, err := s.Parse("ts_day=2026-07-14")
	if err != nil {
		b.Fatal(err)
	}
	sc := arrowSchema(b, "ts")
	m, err := s.Matcher(k, sc)
	if err != nil {
		b.Fatal(err)
	}
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer bld.Release()
	tb := bld.Field(0).(*array.TimestampBuilder)
	start := int64(20648) * usPerDay
	for i := range rows {
		tb.Append(arrow.Timestamp(start + int64(i)*(usPerDay/rows)))
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	b.SetBytes(rows * 8)
	b.ResetTimer()
	for range b.N {
		if err := m.Check(rec); err != nil {
			b.Fatal(err)
		}
	}
}
