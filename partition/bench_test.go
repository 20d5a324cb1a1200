package partition

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

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
