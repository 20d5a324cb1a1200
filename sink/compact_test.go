package sink_test

import (
	"bytes"
	"context"
	"reflect"
	"testing"
	"time"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// dataFiles counts the live data files of partition day of the table.
func dataFiles(t *testing.T, tbl *icetable.Table, day string) int {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		if v, ok := task.File.Partition()[1000]; ok && day == time.UnixMicro(0).AddDate(0, 0, int(toInt(v))).UTC().Format(time.DateOnly) {
			n++
		}
	}
	return n
}

// toInt is a day partition value (int32, or iceberg.Date) as an integer.
func toInt(v any) int64 { return reflect.ValueOf(v).Int() }

// When the watermark passes the end of a day, the sink compacts the day's
// small files into one, with exactly the same rows; the newest snapshot
// still carries every position; compacting again changes nothing.
func TestClosedPartitionIsCompacted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident, sink.WithEventTime("event_time", time.Hour), sink.WithCommitRows(1))
	for o := int64(0); o < 5; o++ { // five commits, five files in day 0
		mustWrite(t, s, sp0, o, o+1)
	}
	before := catalogtest.CanonicalScan(t, cat, ident)
	if n := dataFiles(t, s.Table(), "2026-07-14"); n != 5 {
		t.Fatalf("day 0 has %d files before the watermark passes, want 5", n)
	}
	// A row 2 h into day 1: watermark 01:00 day 1, day 0 closes.
	rec := batch([]msg{{"next", 99, day0.Add(26 * time.Hour)}})
	defer rec.Release()
	if err := s.Write(ctx, sp0, []int64{5}, rec); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Compactions != 1 {
		t.Fatalf("compactions = %d, want 1", st.Compactions)
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if n := dataFiles(t, tbl, "2026-07-14"); n != 1 {
		t.Errorf("day 0 has %d files after compaction, want 1", n)
	}
	if op := tbl.CurrentSnapshot().Summary.Operation; op != icetable.OpReplace {
		t.Errorf("compaction snapshot operation = %s, want replace", op)
	}
	if pos, err := sink.Positions(tbl); err != nil || pos[sp0] != 5 {
		t.Errorf("positions after compaction = %v, %v; want %s at 5", pos, err, sp0)
	}
	var kept [][]byte // the rows after, but the one of day 1
	for _, line := range bytes.SplitAfter(catalogtest.CanonicalScan(t, cat, ident), []byte("\n")) {
		if !bytes.Contains(line, []byte("next")) {
			kept = append(kept, line)
		}
	}
	if after := bytes.Join(kept, nil); !bytes.Equal(after, before) {
		t.Errorf("rows changed by compaction:\nbefore\n%s\nafter\n%s", before, after)
	}
	key, err := s.Key("event_day=2026-07-14")
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Compact(ctx, key)
	if err != nil || !again.Unchanged {
		t.Errorf("compacting again = %+v, %v; want Unchanged", again, err)
	}
}
