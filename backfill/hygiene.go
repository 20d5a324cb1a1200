package backfill

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/table"
)

// Hygiene is the metadata maintenance of a long backfill. Every commit
// adds a snapshot and a metadata.json; left alone, a 400-key backfill
// leaves hundreds of metadata.json files. Manifests need no maintenance
// here: icerun's commits keep them bounded and clustered by partition
// themselves (see package commit).
type Hygiene struct {
	// PreviousVersionsMax, when above 0, sets the table properties
	// write.metadata.delete-after-commit.enabled=true and
	// write.metadata.previous-versions-max=N before the run, so that
	// each commit deletes the metadata.json files that fall out of the
	// metadata log.
	PreviousVersionsMax int
	// KeepSnapshots, when above 0, expires snapshots during the run:
	// whenever the table holds more than twice N snapshots, all but the
	// last N on main's ancestry are expired. A long run's metadata.json
	// then stays bounded, and so does the cost of each commit (every
	// commit parses it). Lineage survives expiry (see ExpireRetainLast);
	// time travel to the expired snapshots does not.
	KeepSnapshots int
	// ExpireRetainLast, when above 0, expires snapshots after a complete
	// run, keeping the last N on main's ancestry (the current one always)
	// and any newer than ExpireOlderThan. Every expiry records the latest
	// write of each partition the expired snapshots made in the table
	// property commit.PropertyLineage, in the same commit: SkipDone,
	// Unchanged and history keep reading it.
	ExpireRetainLast int
	ExpireOlderThan  time.Duration
}

// Stats describes a table's metadata.
type Stats struct {
	Snapshots     int   // snapshots in the current metadata
	Manifests     int   // manifests of the current snapshot
	MetadataJSON  int   // metadata.json files on disk
	CurrentJSON   int64 // bytes of the current metadata.json
	MetadataBytes int64 // bytes of every file under metadata/ (metadata.json, manifest lists, manifests)
}

func (s Stats) String() string {
	return fmt.Sprintf("%d snapshots, %d manifests, %d metadata.json (current %.0f kB), %.1f MB of metadata files",
		s.Snapshots, s.Manifests, s.MetadataJSON, float64(s.CurrentJSON)/1e3, float64(s.MetadataBytes)/1e6)
}

// Measure reads the metadata figures of tbl.
func Measure(ctx context.Context, tbl *icetable.Table) (Stats, error) {
	st := Stats{Snapshots: len(tbl.Metadata().Snapshots())}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return st, err
	}
	if s := tbl.CurrentSnapshot(); s != nil {
		ms, err := s.Manifests(fsys)
		if err != nil {
			return st, err
		}
		st.Manifests = len(ms)
	}
	lister, ok := fsys.(iceio.ListableIO)
	if !ok {
		return st, nil
	}
	err = lister.WalkDir(strings.TrimSuffix(tbl.Location(), "/")+"/metadata", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			return nil
		}
		var info fs.FileInfo
		if err == nil {
			info, err = d.Info()
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed during the walk by another writer's commit (a lost attempt's files, pruned metadata)
		}
		if err != nil {
			return err
		}
		st.MetadataBytes += info.Size()
		if strings.HasSuffix(path, ".metadata.json") {
			st.MetadataJSON++
			if strings.HasSuffix(tbl.MetadataLocation(), "/"+d.Name()) {
				st.CurrentJSON = info.Size()
			}
		}
		return nil
	})
	return st, err
}

// setProperties sets the metadata pruning properties when they differ.
func (h Hygiene) setProperties(ctx context.Context, w *table.Writer) error {
	want := iceberg.Properties{}
	if h.PreviousVersionsMax > 0 {
		want[icetable.MetadataDeleteAfterCommitEnabledKey] = "true"
		want[icetable.MetadataPreviousVersionsMaxKey] = strconv.Itoa(h.PreviousVersionsMax)
	}
	if len(want) == 0 {
		return nil
	}
	_, err := w.CommitMetadata(ctx, "set metadata properties", func(_ context.Context, tbl *icetable.Table) (*table.MetadataChange, error) {
		if holds(tbl.Metadata(), want) {
			return nil, nil
		}
		txn := tbl.NewTransaction()
		if err := txn.SetProperties(want); err != nil {
			return nil, err
		}
		return table.StagedMetadata(txn, func(md icetable.Metadata) bool { return holds(md, want) })
	})
	return err
}

// holds reports whether md has the properties want.
func holds(md icetable.Metadata, want iceberg.Properties) bool {
	props := md.Properties()
	for k, v := range want {
		if props[k] != v {
			return false
		}
	}
	return true
}

// expire expires snapshots after the run as h says.
func (h Hygiene) expire(ctx context.Context, w *table.Writer) error {
	if h.ExpireRetainLast == 0 {
		return nil
	}
	return expire(ctx, w, h.ExpireRetainLast, h.ExpireOlderThan)
}

// expire expires all snapshots but the last keep on main's ancestry and
// any newer than olderThan, and records the lineage of the expired ones in
// a checkpoint file (snapshotcommit.WriteCheckpoint) that the same commit names in
// the table property commit.PropertyLineage.
func expire(ctx context.Context, w *table.Writer, keep int, olderThan time.Duration) error {
	// The files the expiry frees are removed after it, out of the
	// writer's commit turn: the run's workers need not wait for them.
	var garbage []string
	res, err := w.CommitMetadata(ctx, "expire snapshots", func(ctx context.Context, tbl *icetable.Table) (*table.MetadataChange, error) {
		garbage = nil
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		incremental := linear(tbl.Metadata()) // else iceberg-go's cleanup runs after the commit
		txn := tbl.NewTransaction()
		if err := txn.ExpireSnapshots(icetable.WithRetainLast(keep), icetable.WithOlderThan(olderThan), icetable.WithPostCommit(!incremental)); err != nil {
			return nil, err
		}
		staged, err := txn.StagedTable()
		if err != nil {
			return nil, err
		}
		base, ok := newestExpired(tbl.Metadata(), staged.Metadata())
		if !ok {
			return nil, nil // nothing of main's ancestry expires
		}
		var freed []string
		if incremental {
			if freed, err = freedFiles(fsys, tbl.Metadata(), staged.Metadata()); err != nil {
				return nil, err
			}
		}
		path, err := snapshotcommit.WriteCheckpoint(ctx, tbl, base)
		if err != nil {
			return nil, err
		}
		if err := txn.SetProperties(iceberg.Properties{commit.PropertyLineage: path}); err != nil {
			_ = fsys.Remove(path)
			return nil, err
		}
		// The checkpoint is the commit's own file: the loop removes it
		// when the commit is not applied, and keeps it when the outcome
		// cannot be known (the table may name it).
		mc, err := table.StagedMetadata(txn, func(md icetable.Metadata) bool { return md.Properties()[commit.PropertyLineage] == path }, path)
		if err != nil {
			_ = fsys.Remove(path)
			return nil, err
		}
		garbage = freed
		if old := tbl.Properties()[commit.PropertyLineage]; old != "" && old != path {
			garbage = append(garbage, old) // replaced: the new checkpoint holds its records
		}
		return mc, nil
	})
	if err != nil || res.Unchanged {
		return err
	}
	// A file system of its own, on ctx: the attempt's is bound to the
	// commit loop's context, which has ended (an object store's IO keeps
	// the context it was opened with, and refuses every call after it).
	gfs, err := w.Table().FS(ctx)
	if err != nil {
		return nil // best effort, as the removals: what remains is for an orphan cleanup
	}
	for _, f := range garbage {
		_ = gfs.Remove(f) // best effort: what remains is for an orphan cleanup
	}
	return nil
}

// newestExpired is the newest snapshot of main's ancestry in before that
// after no longer has.
func newestExpired(before, after icetable.Metadata) (int64, bool) {
	for _, s := range mainAncestry(before) {
		if after.SnapshotByID(s.SnapshotID) == nil {
			return s.SnapshotID, true
		}
	}
	return 0, false
}
