//go:build interop

package interop

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/sink"
)

// sinkDay0 is the first event day of the sink's stream.
var sinkDay0 = time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)

// sinkMsg is one message of the stream: its source position and its row.
type sinkMsg struct {
	part int32
	off  int64
	id   string
	at   time.Time
}

// sinkFields are the input columns: the message key, its offset as seq,
// its event time.
var sinkFields = []arrow.Field{
	{Name: "id", Type: arrow.BinaryTypes.String},
	{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
	{Name: "event_time", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
}

// sinkBatch is msgs as an input record.
func sinkBatch(msgs []sinkMsg) arrow.RecordBatch {
	return batch(sinkFields, len(msgs), func(b *array.RecordBuilder, i int) {
		b.Field(0).(*array.StringBuilder).Append(msgs[i].id)
		b.Field(1).(*array.Int64Builder).Append(msgs[i].off)
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(msgs[i].at.UnixMicro()))
	})
}

// sinkRow is the row msg lands as in the table.
func sinkRow(m sinkMsg) Row {
	return Row{"id": "s:" + m.id, "seq": fmt.Sprintf("i:%d", m.off), "event_time": fmt.Sprintf("ts:%d", m.at.UnixMicro())}
}

// sinkLateRow is the row a late msg lands as in the side table, without
// its reason (checked apart: a text).
func sinkLateRow(m sinkMsg) Row {
	r := sinkRow(m)
	r[sink.LateSource] = "s:stream:events"
	r[sink.LateSourcePartition] = fmt.Sprintf("i:%d", m.part)
	r[sink.LateOffset] = fmt.Sprintf("i:%d", m.off)
	return r
}

// sinkStream is the messages of source partition part at offsets [from,
// to), event times from at on, one a minute; id "p<part>-<offset>".
func sinkStream(part int32, from, to int64, at time.Time) []sinkMsg {
	var out []sinkMsg
	for o := from; o < to; o++ {
		out = append(out, sinkMsg{part: part, off: o, id: fmt.Sprintf("p%d-%d", part, o), at: at.Add(time.Duration(o-from) * time.Minute)})
	}
	return out
}

// TestSinkReadByEngines streams two source partitions into a day-partitioned
// table through package sink (keyed by id, one hour of allowed lateness):
// several commits, each redelivering part of the previous one; a
// producer's duplicate with a new offset; a crash before a commit and the
// replay on a restarted sink; rows for a closed day routed to the side
// table; the closed day compacted. Spark and PyIceberg read exactly the
// unique messages from the table (and the closed day the same before and
// after its compaction), and exactly the late rows, with their positions
// and a reason, from the side table.
func TestSinkReadByEngines(t *testing.T) {
	e := Get(t)
	e.EachTarget(t, func(t *testing.T, c *Catalog) {
		for _, v := range []int{2, 3} {
			t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { runSink(t, e, c, v) })
		}
	})
}

func runSink(t *testing.T, e *Engines, c *Catalog, v int) {
	ctx := context.Background()
	name := fmt.Sprintf("sink_v%d", v)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "seq", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "event_time", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "event_day", Transform: iceberg.DayTransform{}})
	ident := c.CreateTable(t, name, sch, spec, iceberg.Properties{"format-version": fmt.Sprint(v)})
	open := func() *sink.Sink {
		s, err := sink.Open(ctx, c.Cat, ident, sink.WithKey("id", "event_time"), sink.WithEventTime("event_time", time.Hour),
			sink.WithCommitRows(1_000_000), sink.WithCommitInterval(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	write := func(s *sink.Sink, msgs []sinkMsg) {
		t.Helper()
		byPart := map[int32][]sinkMsg{}
		var parts []int32
		for _, m := range msgs {
			if _, ok := byPart[m.part]; !ok {
				parts = append(parts, m.part)
			}
			byPart[m.part] = append(byPart[m.part], m)
		}
		for _, p := range parts {
			ms := byPart[p]
			offs := make([]int64, len(ms))
			for i, m := range ms {
				offs[i] = m.off
			}
			rec := sinkBatch(ms)
			err := s.Write(ctx, sink.SourcePartition{Source: "stream:events", Partition: p}, offs, rec)
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	commit := func(s *sink.Sink, step string) {
		t.Helper()
		res, err := s.Commit(ctx)
		if err != nil {
			t.Fatalf("%s: commit: %v", step, err)
		}
		t.Logf("%s: %d rows added, stats %+v", step, res.AddedRows, s.Stats())
	}
	noon := sinkDay0.Add(12 * time.Hour)
	var want, late []sinkMsg

	// 1: partitions 0 and 1, day 0.
	s := open()
	p0, p1 := sinkStream(0, 0, 10, noon), sinkStream(1, 0, 5, noon)
	write(s, append(append([]sinkMsg{}, p0...), p1...))
	commit(s, "first")
	want = append(append(want, p0...), p1...)

	// 2: partition 0 redelivered from offset 5 with 5 new messages.
	p0 = sinkStream(0, 0, 15, noon)
	write(s, p0[5:])
	commit(s, "redelivery")
	want = append(want, p0[10:]...)

	// 3: partition 1 redelivered from 0 with 5 new messages, one of them a
	// producer's duplicate of p1-2 (a new offset, the same key: dropped).
	p1 = sinkStream(1, 0, 10, noon)
	p1[7].id, p1[7].at = "p1-2", p1[2].at
	write(s, p1)
	commit(s, "duplicate")
	want = append(want, p1[5:7]...)
	want = append(want, p1[8:]...)
	if st := s.Stats(); st.Redelivered != 10 || st.Duplicates != 1 {
		t.Errorf("after 3 commits: %d redelivered, %d duplicates; want 10 and 1", st.Redelivered, st.Duplicates)
	}

	// 4: a crash before the commit: nothing of it is visible; the replay
	// on a restarted sink writes partition 0 from its table position on:
	// two rows for day 0, then day 1 at 02:00 (the watermark, 01:00, closes
	// day 0), then two rows for day 0: late.
	day1 := sinkDay0.Add(26 * time.Hour)
	p0 = append(sinkStream(0, 0, 17, noon), sinkStream(0, 17, 20, day1)...)
	p0 = append(p0, sinkStream(0, 20, 22, sinkDay0.Add(23*time.Hour))...)
	write(s, p0[10:])
	if err := s.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	s = open()
	start, err := s.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("restart: positions %v", start)
	sp0 := sink.SourcePartition{Source: "stream:events", Partition: 0}
	if start[sp0] != 14 {
		t.Fatalf("restart: partition 0 at %d, want 14", start[sp0])
	}
	write(s, p0[start[sp0]+1:])
	commit(s, "replay after crash")
	want = append(want, p0[15:20]...)
	late = append(late, p0[20:22]...)
	if st := s.Stats(); st.Late != 2 || st.Compactions != 1 {
		t.Errorf("after the replay: %d late, %d compactions; want 2 and 1", st.Late, st.Compactions)
	}

	// 5: everything redelivered again (late rows too): nothing lands.
	write(s, p0)
	write(s, p1)
	if res, err := s.Commit(ctx); err != nil || res.AddedRows != 0 {
		t.Errorf("full redelivery: %d rows added, %v; want none", res.AddedRows, err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}

	tbl := c.Load(t, name)
	if op := tbl.CurrentSnapshot().Summary.Operation; op != "replace" {
		t.Errorf("newest snapshot is %s, want the compaction's replace", op)
	}
	// The closed day before its compaction: the replace's parent.
	before := *tbl.CurrentSnapshot().ParentSnapshotID

	wantRows, lateRows := make([]Row, len(want)), make([]Row, len(late))
	var day0Rows []Row
	for i, m := range want {
		wantRows[i] = sinkRow(m)
		if m.at.Before(sinkDay0.Add(24 * time.Hour)) {
			day0Rows = append(day0Rows, wantRows[i])
		}
	}
	for i, m := range late {
		lateRows[i] = sinkLateRow(m)
	}
	sideName := name + "_sink_late"
	day0 := "event_time < TIMESTAMP_NTZ '2026-07-15 00:00:00'"
	res := e.Batch(t, []Request{
		SparkSQL("SELECT * FROM " + c.Spark(name)),
		PyIcebergScan(c.Name, c.Py(name), Scan{}),
		SparkSQL("SELECT * FROM " + c.Spark(sideName)),
		PyIcebergScan(c.Name, c.Py(sideName), Scan{}),
		SparkSQL(fmt.Sprintf("SELECT * FROM %s VERSION AS OF %d WHERE %s", c.Spark(name), before, day0)),
		SparkSQL(fmt.Sprintf("SELECT * FROM %s WHERE %s", c.Spark(name), day0)),
		PyIcebergScan(c.Name, c.Py(name), Scan{SnapshotID: before, Filter: "event_time < '2026-07-15T00:00:00'"}),
		SparkSQL(fmt.Sprintf("SELECT count(*) AS n FROM %s.files WHERE partition.event_day = DATE '2026-07-14'", c.Spark(name))),
	})
	stats.add(2, 7)
	SameRows(t, "spark: table", wantRows, res[0].Named())
	SameRows(t, "pyiceberg: table", wantRows, res[1].Named())
	for i, who := range []string{"spark", "pyiceberg"} {
		got := res[2+i].Named()
		for _, r := range got {
			if r.Str(sink.LateReason) == "" {
				t.Errorf("%s: side row %v has no reason", who, r)
			}
		}
		SameRows(t, who+": side table", lateRows, Project(got, "id", "seq", "event_time", sink.LateSource, sink.LateSourcePartition, sink.LateOffset))
	}
	SameRows(t, "spark: day 0 before its compaction", day0Rows, res[4].Named())
	SameRows(t, "spark: day 0 after its compaction", day0Rows, res[5].Named())
	SameRows(t, "pyiceberg: day 0 before its compaction", day0Rows, res[6].Named())
	if n := res[7].Named()[0].Int("n"); n != 1 {
		t.Errorf("spark: day 0 has %d data files after its compaction, want 1", n)
	}
}
