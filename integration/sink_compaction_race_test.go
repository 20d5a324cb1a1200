//go:build integration

package integration

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// raceLock is a commit lock that, on the first attempt after armed is
// set, runs before first: the other sink's compaction lands between this
// sink's plan and its commit.
type raceLock struct {
	armed  bool
	before func()
}

func (l *raceLock) Lock(context.Context, icetable.Identifier) (func(), error) {
	if l.armed {
		l.armed = false
		l.before()
	}
	return func() {}, nil
}

// Two sinks of one consumer group append to the same day and both compact
// it when it closes (each compacts the partitions it appended to). The one
// whose compaction loses the race finds the files it read already
// rewritten by the other: the day is compacted, which is what it wanted,
// so it must commit nothing, leave no file behind and carry on. The
// chaos test (TestKafkaSinkChaos with event time) met this race: the
// losing `icerun sink` exited with "compact ...: rewrite: 4 files to
// delete are not in the table's manifests", an untyped error that
// sink/kafka's Run does not recover from.
func TestSinkCompactionRaceIsNotFatal(t *testing.T) {
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "event_time", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "event_day", Transform: iceberg.DayTransform{}})
	ident := catalogtest.CreateTable(t, cat, "events", sch, spec, nil)
	day0 := time.Date(2026, 7, 14, 12, 0, 0, 0, time.UTC)

	lock := &raceLock{}
	a, err := sink.Open(ctx, catalogtest.Open(t, dir), ident)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sink.Open(ctx, catalogtest.Open(t, dir), ident, sink.WithCommitLock(lock))
	if err != nil {
		t.Fatal(err)
	}
	// Two commits each into day 0: four files.
	for i, s := range []*sink.Sink{a, b, a, b} {
		sp := sink.SourcePartition{Source: "kafka:events", Partition: int32(i % 2)}
		rec := raceBatch(string(rune('a'+i)), day0.Add(time.Duration(i)*time.Minute))
		if err := s.Write(ctx, sp, []int64{int64(i / 2)}, rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		if _, err := s.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	before := catalogtest.CanonicalScan(t, cat, ident)

	// b plans the compaction of day 0 (reads the four files, writes one);
	// a compacts day 0 before b's commit attempt.
	key, err := a.Key("event_day=2026-07-14")
	if err != nil {
		t.Fatal(err)
	}
	lock.before = func() {
		if res, err := a.Compact(ctx, key); err != nil || res.Unchanged {
			t.Errorf("the first compaction: %+v, %v", res, err)
		}
	}
	lock.armed = true
	res, err := b.Compact(ctx, key)
	if err != nil {
		t.Errorf("the compaction that lost the race failed (a sink daemon stops on it): %v", err)
	}
	if !res.Unchanged {
		t.Errorf("the compaction that lost the race reports a commit: %+v", res)
	}
	if got := catalogtest.CanonicalScan(t, cat, ident); !bytes.Equal(got, before) {
		t.Errorf("the table's rows changed:\n%s\nwant\n%s", got, before)
	}
	if orphans := catalogtest.UnreferencedDataFiles(t, cat, ident, dir); len(orphans) > 0 {
		t.Errorf("data files referenced by no snapshot: %v", orphans)
	}
}

// raceBatch is one row: id at at.
func raceBatch(id string, at time.Time) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "event_time", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
	}, nil))
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append(id)
	b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(at.UnixMicro()))
	return b.NewRecordBatch()
}
