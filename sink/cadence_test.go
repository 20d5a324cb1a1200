package sink_test

import (
	"context"
	"testing"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/sink"
)

func TestCommitCadenceByBytesAndInterval(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, opt := range map[string]sink.Option{
		"bytes":    sink.WithCommitBytes(1),
		"interval": sink.WithCommitInterval(1), // 1 ns: due on every write
	} {
		t.Run(name, func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			ident := eventsTable(t, cat, "events")
			s, err := sink.Open(ctx, cat, ident, opt)
			if err != nil {
				t.Fatal(err)
			}
			mustWrite(t, s, sp0, 0, 3)
			mustWrite(t, s, sp0, 3, 6)
			if st := s.Stats(); st.Commits != 2 || s.Pending() != 0 {
				t.Errorf("commits = %d, pending = %d; want 2 and 0", st.Commits, s.Pending())
			}
		})
	}
}

// A batch whose rows are all dropped (duplicates in keyed mode) still
// commits its positions, in a snapshot without data files, so a restart
// does not read them again.
func TestPositionsAdvanceWithoutRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident, sink.WithKey("id", "event_time"))
	rec := batch([]msg{{"a", 0, day0}})
	defer rec.Release()
	if err := s.Write(ctx, sp0, []int64{0}, rec); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s)
	if err := s.Write(ctx, sp0, []int64{7}, rec); err != nil { // "a" again at offset 7
		t.Fatal(err)
	}
	res, err := s.Commit(ctx)
	if err != nil || res.SnapshotID == 0 || res.AddedFiles != 0 {
		t.Fatalf("commit of a duplicate = %+v, %v; want a snapshot without files", res, err)
	}
	pos, err := sink.Positions(s.Table())
	if err != nil || pos[sp0] != 7 {
		t.Errorf("positions = %v, %v; want %s at 7", pos, err, sp0)
	}
	if got := ids(t, cat, ident); len(got) != 1 {
		t.Errorf("table ids = %v, want [a]", got)
	}
}

// Appends stay cheap over many commits: new files go to new manifests and
// small manifests are merged, so the manifest list stays bounded.
func TestManifestsStayBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident, sink.WithCommitRows(1))
	const commits = 60
	for o := int64(0); o < commits; o++ {
		mustWrite(t, s, sp0, o, o+1)
	}
	tbl := s.Table()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := tbl.CurrentSnapshot().Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) > snapshotcommit.MergeSmallManifests {
		t.Errorf("%d commits left %d manifests, want at most %d", commits, len(mfs), snapshotcommit.MergeSmallManifests)
	}
	if got := ids(t, cat, ident); len(got) != commits {
		t.Errorf("table holds %d rows, want %d", len(got), commits)
	}
}
