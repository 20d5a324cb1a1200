package reruntest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
)

// Fault is a kind of failure injected into a run.
type Fault int

const (
	// FileWrite fails the K-th file created through a table's IO (data
	// files, manifests, manifest lists), as a full disk or a killed
	// process would leave it: not written, the run fails.
	FileWrite Fault = iota + 1
	// Commit fails the K-th catalog commit before the catalog applies it.
	Commit
	// CommitLost applies the K-th catalog commit, then reports an error
	// to the caller, as a lost response would.
	CommitLost
)

// AllFaults lists every Fault.
var AllFaults = []Fault{FileWrite, Commit, CommitLost}

func (f Fault) String() string {
	switch f {
	case FileWrite:
		return "file write"
	case Commit:
		return "catalog commit"
	case CommitLost:
		return "catalog commit (applied, response lost)"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// ErrInjected is the error of every injected failure.
var ErrInjected = errors.New("reruntest: injected failure")

// injector counts operations and fails the k-th one of its fault.
type injector struct {
	mu     sync.Mutex
	fault  Fault // 0: none armed
	k      int
	counts map[Fault]int
	fired  bool
}

// hit counts one operation of kind f and reports whether it must fail.
func (in *injector) hit(f Fault) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.counts == nil {
		in.counts = make(map[Fault]int)
	}
	kind := f
	if f == CommitLost {
		kind = Commit
	}
	n := in.counts[kind]
	in.counts[kind]++
	armed := in.fault
	if armed == CommitLost {
		armed = Commit
	}
	if in.fault == 0 || in.fired || armed != kind || n != in.k {
		return false
	}
	in.fired = true
	return true
}

func (in *injector) arm(f Fault, k int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.fault, in.k, in.fired, in.counts = f, k, false, nil
}

func (in *injector) disarm() (fired bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	fired = in.fired
	in.fault, in.fired = 0, false
	return fired
}

func (in *injector) lost() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.fault == CommitLost
}

// faultCatalog wraps a catalog: commits go through the injector, and the
// tables it returns write through a faultIO and commit through it.
type faultCatalog struct {
	catalog.Catalog
	in *injector
}

func (c *faultCatalog) wrap(tbl *icetable.Table) *icetable.Table {
	fsF := func(ctx context.Context) (iceio.IO, error) {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		return &faultIO{IO: fsys, in: c.in}, nil
	}
	return icetable.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), fsF, c)
}

func (c *faultCatalog) LoadTable(ctx context.Context, ident icetable.Identifier) (*icetable.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	return c.wrap(tbl), nil
}

func (c *faultCatalog) CreateTable(ctx context.Context, ident icetable.Identifier, sc *iceberg.Schema, opts ...catalog.CreateTableOpt) (*icetable.Table, error) {
	tbl, err := c.Catalog.CreateTable(ctx, ident, sc, opts...)
	if err != nil {
		return nil, err
	}
	return c.wrap(tbl), nil
}

func (c *faultCatalog) CommitTable(ctx context.Context, ident icetable.Identifier, reqs []icetable.Requirement, ups []icetable.Update) (icetable.Metadata, string, error) {
	if c.in.hit(Commit) {
		if c.in.lost() {
			if _, _, err := c.Catalog.CommitTable(ctx, ident, reqs, ups); err != nil {
				return nil, "", err
			}
			return nil, "", fmt.Errorf("%w: commit of %v applied, response lost", ErrInjected, ident)
		}
		return nil, "", fmt.Errorf("%w: commit of %v refused", ErrInjected, ident)
	}
	return c.Catalog.CommitTable(ctx, ident, reqs, ups)
}

// faultIO fails the armed file creation. Other calls go to the wrapped IO.
type faultIO struct {
	iceio.IO
	in *injector
}

func (f *faultIO) Create(name string) (iceio.FileWriter, error) {
	w, ok := f.IO.(iceio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("reruntest: %T cannot create files", f.IO)
	}
	if f.in.hit(FileWrite) {
		return nil, &fs.PathError{Op: "create", Path: name, Err: ErrInjected}
	}
	return w.Create(name)
}

func (f *faultIO) WriteFile(name string, p []byte) error {
	w, ok := f.IO.(iceio.WriteFileIO)
	if !ok {
		return fmt.Errorf("reruntest: %T cannot write files", f.IO)
	}
	if f.in.hit(FileWrite) {
		return &fs.PathError{Op: "write", Path: name, Err: ErrInjected}
	}
	return w.WriteFile(name, p)
}

func (f *faultIO) ReadFile(name string) ([]byte, error) {
	if r, ok := f.IO.(iceio.ReadFileIO); ok {
		return r.ReadFile(name)
	}
	return fs.ReadFile(ioFS{f.IO}, name)
}

func (f *faultIO) WalkDir(root string, fn fs.WalkDirFunc) error {
	if l, ok := f.IO.(iceio.ListableIO); ok {
		return l.WalkDir(root, fn)
	}
	return fmt.Errorf("reruntest: %T cannot list files: %w", f.IO, errors.ErrUnsupported)
}

func (f *faultIO) Stat(name string) (fs.FileInfo, error) {
	if s, ok := f.IO.(iceio.StatIO); ok {
		return s.Stat(name)
	}
	file, err := f.IO.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return file.Stat()
}

// ioFS adapts an IO to fs.FS for fs.ReadFile.
type ioFS struct{ iceio.IO }

func (f ioFS) Open(name string) (fs.File, error) { return f.IO.Open(name) }
