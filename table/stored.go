package table

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/rowdelete"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
)

// storedKey is what a table holds of one key: the greatest order among
// its live rows, and the partitions (of the current spec) that hold one.
type storedKey struct {
	ord   orderKey
	parts []partition.Key
	// rows are where its live rows are, in the data files read with
	// their positions known (see placed).
	rows []rowPlace
}

// rowPlace is the position of a row in a data file.
type rowPlace struct {
	file string
	pos  int64
}

// placed are the data files a readStored read with positions known
// (every one it read but those with equality deletes), by path: in those
// the rows it found of each key are all the key's live rows, and a
// change planned on the same table state need not read them again to
// locate them (placedMatcher).
type placed map[string]bool

// readStored reads the key and order columns of the live rows of tbl
// (deletes applied) whose encoded key is in keys, and returns what tbl
// holds of each: the keys compared with the stored rows by a changelog
// write and by Upsert under WithUpsertNewerOnly. Data files whose bounds
// on the first key column hold none of rng's values are not read. With
// spec (nil for a table whose partitions do not matter) a key found in a
// file of an older partition spec fails with commit.ErrUnsupported: its
// row could not be deleted by partition. Memory: one batch, plus one
// entry per key found.
func readStored(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, keyColumns, order []string, keys map[string]struct{}, rng *keyRange) (map[string]*storedKey, error) {
	out, _, err := readStoredPlaced(ctx, tbl, spec, keyColumns, order, keys, rng)
	return out, err
}

// readStoredPlaced is readStored, with the data files whose rows of
// keys it placed (storedKey.rows).
func readStoredPlaced(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, keyColumns, order []string, keys map[string]struct{}, rng *keyRange) (map[string]*storedKey, placed, error) {
	out, in := map[string]*storedKey{}, placed{}
	if tbl.CurrentSnapshot() == nil || len(keys) == 0 {
		return out, in, nil
	}
	cols := columnsOf(keyColumns, order)
	read, err := tbl.Schema().Select(true, cols...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
	}
	first, ok := tbl.Schema().FindFieldByName(keyColumns[0])
	if !ok {
		return nil, nil, fmt.Errorf("%w: %q is not a column of %s", ErrBadUpsertKey, keyColumns[0], tbl.Identifier())
	}
	m, err := newKeyMatcher(tbl, keyColumns, keys, rng)
	if err != nil {
		return nil, nil, err
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, nil, err
	}
	dels, err := rowdelete.NewDeletes(ctx, tbl)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range tasks {
		if !rng.mayHold(t.File, first.ID) {
			continue
		}
		var part partition.Key
		current := spec == nil || t.File.SpecID() == int32(spec.ID())
		if spec != nil && current {
			if part, err = spec.KeyFromValues(t.File.Partition()); err != nil {
				return nil, nil, fmt.Errorf("data file %s: %w", t.File.FilePath(), err)
			}
		}
		// The file is read without its deletes, and only the rows whose
		// key is in keys are looked up among the deleted positions:
		// cheaper than deleting by position every row read. A file
		// with equality deletes is read with its deletes applied.
		task := t
		deleted, err := dels.Of(t)
		switch {
		case errors.Is(err, rowdelete.ErrEqualityDeletes):
			deleted = nil
		case err != nil:
			return nil, nil, fmt.Errorf("data file %s: %w", t.File.FilePath(), err)
		default:
			task = icetable.FileScanTask{File: t.File, Length: t.File.FileSizeBytes()}
		}
		sc, batches, err := tbl.Scan(icetable.WithSelectedFields(cols...), icetable.WithMaxConcurrency(1), icetable.WithArrowBatchSize(mergeBatchRows)).
			ReadTasks(ctx, []icetable.FileScanTask{task})
		if err != nil {
			return nil, nil, err
		}
		var pos int64 // of the batch's first row in the file (without deletes applied)
		res, err := schema.Resolve(sc, read, tbl.NameMapping(), schema.IgnoreUnknown)
		if err != nil {
			return nil, nil, err
		}
		err = applyEach(ctx, res, false, batches, func(rec arrow.RecordBatch) error {
			ordOf, err := orderColumns(rec, order)
			if err != nil {
				return err
			}
			at := pos
			pos += rec.NumRows()
			var bad error
			err = m.Match(ctx, rec, func(row int, key []byte) {
				if bad != nil || deleted != nil && deleted.Contains(uint64(at+int64(row))) {
					return
				}
				if !current {
					bad = fmt.Errorf("%w: data file %s holds key %s under partition spec %d; replace its partition first", commit.ErrUnsupported, t.File.FilePath(), keyText(rec, keyColumns, row), t.File.SpecID())
					return
				}
				s := out[string(key)]
				if s == nil {
					s = &storedKey{ord: ordOf(row)}
					out[string(key)] = s
				} else if o := ordOf(row); o.compare(s.ord) > 0 {
					s.ord = o
				}
				if spec != nil && !slices.Contains(s.parts, part) {
					s.parts = append(s.parts, part)
				}
				if deleted != nil {
					s.rows = append(s.rows, rowPlace{file: t.File.FilePath(), pos: at + int64(row)})
				}
			})
			if err != nil {
				return err
			}
			return bad
		})
		if err != nil {
			return nil, nil, fmt.Errorf("data file %s: %w", t.File.FilePath(), err)
		}
		if deleted != nil {
			if pos != t.File.Count() {
				return nil, nil, fmt.Errorf("data file %s: read %d rows, the manifest says %d: positions would be wrong", t.File.FilePath(), pos, t.File.Count())
			}
			in[t.File.FilePath()] = true
		}
	}
	return out, in, nil
}

// columnsOf is a then the columns of b not in a.
func columnsOf(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, c := range b {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}
