package table

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/internal/rowdelete"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
)

// rowDelta is one partition's merge-on-read change, its files staged.
type rowDelta struct {
	delta snapshotcommit.Delta
	st    *stager           // the new rows' data files; nil when none
	dw    *rowdelete.Writer // the delete files; nil when none
	// rowIDs are the current _row_id of the deleted rows, by encoded key:
	// the ids their replacements keep. Nil when the rows have no lineage
	// to keep (below v3).
	rowIDs map[string]int64
}

// discard removes the staged files of d.
func (d *rowDelta) discard() error {
	var errs []error
	if d.st != nil {
		files, _ := d.st.finish()
		errs = append(errs, d.st.remove(files), d.st.removeUnlisted(files))
	}
	if d.dw != nil {
		errs = append(errs, d.dw.Remove())
	}
	return errors.Join(errs...)
}

// deltaPlanner plans the merge-on-read change of one partition on a table
// state: nil when the partition already holds it.
type deltaPlanner func(ctx context.Context, tbl *icetable.Table, k partition.Key) (*rowDelta, error)

// locateDelta plans the deleting half of a change of partition k: the
// live rows whose encoded key is in keys get delete files; rng (nil: none)
// holds the keys' first column values, to skip data files by their
// bounds. It returns nil when the partition already holds what the change
// fp from this code version left. known, when not nil, holds where the
// keys' live rows are in the files it read of tbl: those are not read
// again.
func locateDelta[V any](ctx context.Context, w *Writer, tbl *icetable.Table, spec *partition.Spec, k partition.Key, keyColumns []string, keys map[string]V, rng *keyRange, fp string, known *placement) (*rowDelta, error) {
	base, tasks, held, err := w.deltaBase(ctx, tbl, spec, k, fp)
	if held || err != nil {
		return nil, err
	}
	set := make(map[string]struct{}, len(keys))
	for key := range keys {
		set[key] = struct{}{}
	}
	m, err := newKeyMatcher(tbl, keyColumns, set, rng)
	if err != nil {
		return nil, err
	}
	var pick rowdelete.Matcher = m
	if known != nil {
		pick = known.matcher(m, set)
	}
	return locateWith(ctx, tbl, spec, k, base, tasks, pick, fp, true)
}

// deltaBase reads the files of partition k in tbl for the change fp:
// base, every file of the partition as the commit plans it (data and
// delete files), and the scan tasks of its current-spec data files, to
// locate rows in; held when the partition already holds what fp from
// this code version left (nothing to plan).
func (w *Writer) deltaBase(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, k partition.Key, fp string) (base []iceberg.DataFile, tasks []icetable.FileScanTask, held bool, err error) {
	files, err := snapshotcommit.Files(ctx, tbl, spec, []partition.Key{k})
	if err != nil {
		return nil, nil, false, err
	}
	if snapshotcommit.Held(tbl, w.cfg.codeVersion, k, fp, files[k]) {
		return nil, nil, true, nil
	}
	tasks, err = partitionFiles(ctx, tbl, spec, k)
	return files[k], tasks, false, err
}

// locateWith plans the delete files of partition k for the rows m picks
// in tasks, its data files in the state whose files are base. With
// rowIDs, and row lineage on the table, it also reads the picked rows'
// _row_id (rowDelta.rowIDs).
func locateWith(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, k partition.Key, base []iceberg.DataFile, tasks []icetable.FileScanTask, m rowdelete.Matcher, fp string, rowIDs bool) (*rowDelta, error) {
	loc, err := rowdelete.NewLocator(ctx, tbl, m, mergeBatchRows)
	if err != nil {
		return nil, err
	}
	if rowIDs {
		lineage, err := hasLineage(tbl, tasks)
		if err != nil {
			return nil, err
		}
		if lineage {
			loc.KeepRowIDs(explicitRowIDs)
		}
	}
	found, err := loc.Locate(ctx, tasks)
	if err != nil {
		return nil, err
	}
	d := &rowDelta{delta: snapshotcommit.Delta{Key: k, Base: base, Fingerprint: fp}, rowIDs: loc.RowIDs()}
	if d.dw, err = newDeleteWriter(ctx, tbl, spec, k); err != nil {
		return d, err
	}
	d.delta.Deletes, d.delta.Superseded, d.delta.DeletedRows, err = d.dw.Write(ctx, found)
	return d, err
}

// commitDeltas plans the change of every partition of keys with plan and
// commits them in one snapshot ([snapshotcommit.RowDelta]). Partitions
// that another writer changed in between are planned again on the new
// state, within the writer's retry budget, then [commit.ErrConflict].
// verify, when not nil, is checked on every attempt's base (see
// [snapshotcommit.RowDeltaRequest].Verify). Staged files are removed
// unless the commit's outcome is unknown.
func commitDeltas(ctx context.Context, w *Writer, op string, tbl *icetable.Table, spec *partition.Spec, keys []partition.Key, plan deltaPlanner, verify func(context.Context, *icetable.Table) error) (commit.Result, error) {
	unchanged := func(tbl *icetable.Table, attempts int) commit.Result {
		r := commit.Result{Unchanged: true, Attempts: attempts}
		if s := tbl.CurrentSnapshot(); s != nil {
			r.SnapshotID = s.SnapshotID
		}
		return r
	}
	if len(keys) == 0 {
		return unchanged(tbl, 1), nil
	}
	parts := make(map[partition.Key]*rowDelta, len(keys))
	removeAll := func() error {
		var errs []error
		for _, d := range parts {
			if d != nil {
				errs = append(errs, d.discard())
			}
		}
		return errors.Join(errs...)
	}
	stale, schemaID := keys, tbl.Schema().ID
	result, err := w.replan(replan{
		op: op,
		round: func(budget, spent int) (commit.Result, error) {
			for _, k := range stale {
				if old := parts[k]; old != nil {
					if err := old.discard(); err != nil {
						return commit.Result{}, fmt.Errorf("%s: %w", op, err)
					}
				}
				d, err := plan(ctx, tbl, k)
				parts[k] = d
				if err != nil {
					return commit.Result{}, fmt.Errorf("%s: %s: %w", op, keyName(k), err)
				}
			}
			var deltas []snapshotcommit.Delta
			for _, k := range keys {
				if d := parts[k]; d != nil && (len(d.delta.Data) > 0 || len(d.delta.Deletes) > 0) {
					deltas = append(deltas, d.delta)
				}
			}
			if len(deltas) == 0 {
				return unchanged(tbl, 0), nil // no commit attempt
			}
			base := w.request(op, tbl, spec, nil)
			req := snapshotcommit.RowDeltaRequest{Target: base.Target, Deltas: deltas, Lineage: base.Lineage, TableProperties: base.TableProperties, Verify: verify}
			req.Base = tbl
			req.Policy.Attempts, req.Spent = budget, spent
			w.commitTurn.lock()
			defer w.commitTurn.unlock()
			return snapshotcommit.RowDelta(ctx, w.cat, req)
		},
		moved: func(err error) bool {
			var moved *snapshotcommit.BaseMovedError
			if errors.As(err, &moved) {
				stale = moved.Keys
				return true
			}
			return false
		},
		again: func() (err error) {
			tbl, err = w.rebase(ctx, op, schemaID, spec.ID(), "locating rows")
			return err
		},
	})
	var unknown *commit.UnknownOutcomeError
	switch {
	case err == nil && result.Unchanged:
		return result, removeAll()
	case err == nil:
		_, _ = w.refresh(context.WithoutCancel(ctx)) // committed; the cached state is only a hint
		return result, nil
	case errors.As(err, &unknown):
		return result, err // the files may be live: leave them to orphan cleanup
	}
	return result, errors.Join(err, removeAll())
}

// changeFingerprint identifies a merge-on-read change of one partition:
// its kind, key columns, and each key with the hash of the row it gets
// (zero for a delete). The kind prefix keeps it apart from every content
// fingerprint a replacement records.
func changeFingerprint(kind string, keyColumns []string, rows map[string]fingerprint.Hash) string {
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := sha256.New()
	h.Write([]byte(strings.Join(keyColumns, "\x00")))
	var n [8]byte
	for _, k := range keys {
		binary.LittleEndian.PutUint64(n[:], uint64(len(k)))
		h.Write(n[:])
		h.Write([]byte(k))
		v := rows[k]
		h.Write(v[:])
	}
	return kind + ":" + hex.EncodeToString(h.Sum(nil)[:16])
}

// newDeleteWriter returns the writer of partition key's delete files.
func newDeleteWriter(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, key partition.Key) (*rowdelete.Writer, error) {
	values, err := spec.Values(key)
	if err != nil {
		return nil, err
	}
	folder := ""
	if !tbl.Spec().IsUnpartitioned() {
		folder = partitionPath(tbl, values)
	}
	return rowdelete.NewWriter(ctx, tbl, values, folder)
}
