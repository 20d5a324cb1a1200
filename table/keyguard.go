package table

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// keyGuard is what a write that compared its input keys with the table's
// rows checks on every commit attempt, as Java Iceberg's RowDelta
// validates conflicting data and delete files with a conflict filter: no
// file live in the attempt's base that was not live in the snapshot the
// comparison read may hold one of the keys, in any partition. Files whose
// bounds on the first key column hold none of the keys' values (the
// pruning of the comparison, see keyRange) do not count; a delete file
// counts when a data file it applies to may hold one. The partitions the
// write changes are checked file by file by the commit itself (Verify, a
// row delta's Base), so a file the write deletes rows of cannot be gone.
// A keyGuard is used by one call, one attempt at a time.
type keyGuard struct {
	snapshot int64     // the snapshot the comparison read; 0 for none
	rng      *keyRange // the first key column's values of the keys
	before   map[string]bool
	// side, when set, validates what else the comparison read (a
	// changelog write's tombstones, see tombstoneGuard) after the table:
	// on every attempt, once the attempt's base is loaded.
	side func(ctx context.Context) error
}

// newKeyGuard guards the comparison of the keys whose first key column
// values rng holds with tbl's rows.
func newKeyGuard(tbl *icetable.Table, rng *keyRange) *keyGuard {
	return &keyGuard{snapshot: snapshotID(tbl), rng: rng}
}

// check fails with errDecidedOnOldState when base holds a file, not live
// in the compared snapshot, that may hold one of the keys, or when the
// side check fails; a nil guard passes.
func (g *keyGuard) check(ctx context.Context, base *icetable.Table) error {
	if g == nil {
		return nil
	}
	if err := g.checkFiles(ctx, base); err != nil {
		return err
	}
	if g.side != nil {
		return g.side(ctx)
	}
	return nil
}

// checkFiles is check without the side check.
func (g *keyGuard) checkFiles(ctx context.Context, base *icetable.Table) error {
	if snapshotID(base) == g.snapshot {
		return nil
	}
	first, ok := base.Schema().FindFieldByName(g.rng.column)
	if !ok {
		return fmt.Errorf("%w: key column %q is gone", errDecidedOnOldState, g.rng.column)
	}
	if g.before == nil {
		before := map[string]bool{}
		if g.snapshot != 0 && base.Metadata().SnapshotByID(g.snapshot) == nil {
			return fmt.Errorf("%w: compared snapshot %d expired", errDecidedOnOldState, g.snapshot)
		}
		if g.snapshot != 0 {
			tasks, err := base.Scan(icetable.WithSnapshotID(g.snapshot)).PlanFiles(ctx)
			if err != nil {
				return fmt.Errorf("files of compared snapshot %d: %w", g.snapshot, err)
			}
			for _, t := range tasks {
				for _, id := range taskFiles(t) {
					before[id] = true
				}
			}
		}
		g.before = before
	}
	tasks, err := base.Scan().PlanFiles(ctx)
	if err != nil {
		return err
	}
	for _, t := range tasks {
		if !g.rng.mayHold(t.File, first.ID) {
			continue
		}
		for _, id := range taskFiles(t) {
			if !g.before[id] {
				return fmt.Errorf("%w: file %s, committed after snapshot %d, may hold an input key", errDecidedOnOldState, id, g.snapshot)
			}
		}
	}
	return nil
}

// taskFiles names the files of t: its data file, and each delete file
// with the data file it applies to.
func taskFiles(t icetable.FileScanTask) []string {
	out := []string{t.File.FilePath()}
	for _, fs := range [][]iceberg.DataFile{t.DeleteFiles, t.EqualityDeleteFiles, t.DeletionVectorFiles} {
		for _, d := range fs {
			id := d.FilePath()
			if off := d.ContentOffset(); off != nil {
				id += "#" + strconv.FormatInt(*off, 10)
			}
			out = append(out, id+" of "+t.File.FilePath())
		}
	}
	return out
}
