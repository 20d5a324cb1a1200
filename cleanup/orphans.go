package cleanup

import (
	"context"
	"errors"
	"fmt"
	"time"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/snapshotcommit"
)

// DefaultMinAge is the age a file must have before [Orphans] considers it.
// It is far longer than any replacement runs, so a file being written and
// not yet committed is never taken for an orphan.
const DefaultMinAge = 6 * time.Hour

// ErrBadOption is returned for an invalid option value.
var ErrBadOption = errors.New("cleanup: bad option")

// Option configures [Orphans].
type Option func(*config) error

type config struct {
	minAge  time.Duration
	execute bool
}

// MinAge considers only files modified more than d ago. d must be
// positive; use [AnyAge] for zero. Default [DefaultMinAge].
func MinAge(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: minimum age %v (use AnyAge for zero)", ErrBadOption, d)
		}
		c.minAge = d
		return nil
	}
}

// AnyAge considers files of any age, including those a running writer may
// be about to commit. Use it only when no writer of the table can be
// running.
func AnyAge() Option {
	return func(c *config) error {
		c.minAge = 0
		return nil
	}
}

// Execute removes the orphans found. Default: dry run, nothing is removed.
func Execute() Option {
	return func(c *config) error {
		c.execute = true
		return nil
	}
}

// File is one orphan file.
type File struct {
	Path string
	Size int64
}

// Report is the outcome of [Orphans].
type Report struct {
	Orphans []File    // unreferenced files older than Cutoff
	Removed []string  // the orphans removed (none in a dry run)
	Cutoff  time.Time // files modified at or after it were not considered
	DryRun  bool
}

// Orphans lists the orphan files of tbl (see the package documentation)
// and, with [Execute], removes them. tbl should be freshly loaded: files
// referenced only by a newer table state would be taken for orphans.
func Orphans(ctx context.Context, tbl *icetable.Table, opts ...Option) (Report, error) {
	cfg := config{minAge: DefaultMinAge}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return Report{}, err
		}
	}
	name := tbl.Identifier()
	plan, err := tbl.PlanOrphanFiles(ctx, icetable.WithFilesOlderThan(cfg.minAge))
	if err != nil {
		return Report{}, fmt.Errorf("cleanup: %v: plan: %w", name, err)
	}
	rep := Report{Cutoff: plan.Cutoff(), DryRun: !cfg.execute}
	for _, f := range plan.OrphanFiles() {
		if !snapshotcommit.IsCheckpoint(tbl, f.Path) { // icerun's lineage: named by a table property
			rep.Orphans = append(rep.Orphans, File{Path: f.Path, Size: f.SizeBytes})
		}
	}
	if !cfg.execute || len(rep.Orphans) == 0 {
		return rep, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return rep, fmt.Errorf("cleanup: %v: %w", name, err)
	}
	keep := func(path string) error {
		if snapshotcommit.IsCheckpoint(tbl, path) {
			return nil
		}
		return fsys.Remove(path)
	}
	res, err := tbl.ExecuteOrphanCleanup(ctx, plan, icetable.WithDeleteFunc(keep))
	for _, p := range res.DeletedFiles {
		if !snapshotcommit.IsCheckpoint(tbl, p) {
			rep.Removed = append(rep.Removed, p)
		}
	}
	if err != nil {
		return rep, fmt.Errorf("cleanup: %v: remove: %w", name, err)
	}
	return rep, nil
}
