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
	// ExpireRetainLast, when above 0, expires snapshots after a complete
	// run, keeping the last N on main's ancestry (the current one always)
	// and any newer than ExpireOlderThan. Expired snapshots take their
	// lineage with them: a later SkipDone run or history sees only the
	// snapshots kept.
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
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
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
	return retry(ctx, w, func(tbl *icetable.Table) (bool, error) {
		props := tbl.Properties()
		same := true
		for k, v := range want {
			same = same && props[k] == v
		}
		if same {
			return false, nil
		}
		txn := tbl.NewTransaction()
		if err := txn.SetProperties(want); err != nil {
			return false, err
		}
		_, err := txn.Commit(ctx)
		return true, err
	})
}

// expire expires snapshots as h says.
func (h Hygiene) expire(ctx context.Context, w *table.Writer) error {
	if h.ExpireRetainLast == 0 {
		return nil
	}
	return retry(ctx, w, func(tbl *icetable.Table) (bool, error) {
		txn := tbl.NewTransaction()
		if err := txn.ExpireSnapshots(icetable.WithRetainLast(h.ExpireRetainLast), icetable.WithOlderThan(h.ExpireOlderThan)); err != nil {
			return false, err
		}
		_, err := txn.Commit(ctx)
		return true, err
	})
}

// retry runs a maintenance commit on the latest table state, again when a
// concurrent commit (another worker's) made it conflict. Maintenance
// commits change no data, so a blind retry on a fresh state is safe.
func retry(ctx context.Context, w *table.Writer, fn func(tbl *icetable.Table) (bool, error)) error {
	var err error
	for range 10 {
		var tbl *icetable.Table
		if tbl, err = w.Refresh(ctx); err != nil {
			return err
		}
		if _, err = fn(tbl); err == nil || !conflict(err) {
			return err
		}
	}
	return err
}

func conflict(err error) bool {
	return errors.Is(err, icetable.ErrCommitFailed) || strings.Contains(err.Error(), "requirement failed")
}
