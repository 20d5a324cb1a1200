package sink_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

// Every sink snapshot carries the lineage every icerun snapshot does: the
// run (a random one unless WithRunID names it, as table.Writer's) and the
// canonical keys of the table partitions the append touched, so a rollup
// finds the days a stream changed.
func TestSinkSnapshotsCarryLineage(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident)
	mustWrite(t, s, sp0, 86400, 86403) // day0 + 1
	mustWrite(t, s, sp0, 86500, 86501)
	mustCommit(t, s) // one partition
	one := s.Table().CurrentSnapshot().Summary.Properties
	mustWrite(t, s, sp0, 86600, 86602)
	sp1 := sink.SourcePartition{Source: "test:events", Partition: 1}
	mustWrite(t, s, sp1, 0, 2) // day0
	mustCommit(t, s)
	two := s.Table().CurrentSnapshot().Summary.Properties

	if got, want := one[commit.SummaryPartitions], "event_day=2026-07-15"; got != want {
		t.Errorf("first snapshot: %s = %q, want %q", commit.SummaryPartitions, got, want)
	}
	if got, want := two[commit.SummaryPartitions], "event_day=2026-07-14,event_day=2026-07-15"; got != want {
		t.Errorf("second snapshot: %s = %q, want %q", commit.SummaryPartitions, got, want)
	}
	// The lineage readers see one write per partition of each append.
	for key, n := range map[string]int{"event_day=2026-07-14": 1, "event_day=2026-07-15": 2} {
		if got := table.History(s.Table(), key); len(got) != n || got[0].RunID != one[commit.SummaryRunID] {
			t.Errorf("History(%s) = %+v, want %d writes of the sink's run", key, got, n)
		}
	}
	run := one[commit.SummaryRunID]
	if _, err := uuid.Parse(run); err != nil {
		t.Errorf("%s = %q, want a random UUID", commit.SummaryRunID, run)
	}
	if two[commit.SummaryRunID] != run {
		t.Errorf("the sink's snapshots name runs %q and %q, want one", run, two[commit.SummaryRunID])
	}
	if got, want := two[commit.SummarySchemaID], "0"; got != want {
		t.Errorf("%s = %q, want %q", commit.SummarySchemaID, got, want)
	}

	other := mustOpen(t, cat, ident)
	mustWrite(t, other, sp1, 2, 3)
	mustCommit(t, other)
	if got := other.Table().CurrentSnapshot().Summary.Properties[commit.SummaryRunID]; got == run || got == "" {
		t.Errorf("another sink's run %q, want a random run of its own (the first is %q)", got, run)
	}
	named := mustOpen(t, cat, ident, sink.WithRunID("nightly-7"))
	mustWrite(t, named, sp1, 3, 4)
	mustCommit(t, named)
	if got := named.Table().CurrentSnapshot().Summary.Properties[commit.SummaryRunID]; got != "nightly-7" {
		t.Errorf("WithRunID(nightly-7): %s = %q", commit.SummaryRunID, got)
	}
}
