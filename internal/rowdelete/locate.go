package rowdelete

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"

	"github.com/icerun/icerun/schema"
)

// ErrEqualityDeletes says that a partition has equality delete files:
// positions alone do not say which of its rows are live, so a
// merge-on-read change of it is written copy-on-write instead.
var ErrEqualityDeletes = errors.New("partition has equality deletes")

// Located are the live rows of one data file that a change removes.
type Located struct {
	task     icetable.FileScanTask
	existing *dv.RoaringPositionBitmap // positions deleted before (its vector and position deletes)
	hit      []int64                   // live positions whose key the change holds, ascending
	// scoped are the position delete files that delete rows of this data
	// file only (file-scoped), carried the positions they delete: a new
	// file-scoped position delete file holds them with the hits and
	// replaces them, so that the data file keeps one (as a deletion
	// vector does on v3).
	scoped  []iceberg.DataFile
	carried *dv.RoaringPositionBitmap
}

// Matcher picks the rows a change deletes from a batch of a data
// file's rows (the matcher's columns, resolved to readSchema).
type Matcher interface {
	ReadSchema() *iceberg.Schema
	// mayHold reports whether data file f may hold a row it picks (false
	// skips the file unread).
	MayHold(f iceberg.DataFile) bool
	// match calls hit with each row of rec it picks, and the row's
	// encoded key when the matcher picks by key (else nil; hit must not
	// keep it).
	Match(ctx context.Context, rec arrow.RecordBatch, hit func(row int, key []byte)) error
	// fork returns a matcher that picks the same rows and may run on
	// another goroutine beside this one.
	Fork() Matcher
}

// fileScans counts the data files Locators read (FileScans).
var fileScans atomic.Int64

// FileScans is how many data files the Locators of this process have
// read so far (a Placed matcher's files are not read).
func FileScans() int64 { return fileScans.Load() }

// Placed is a Matcher that may know already where the rows it picks
// are in a data file, from a read of the same table state: the Locator
// then takes those positions instead of reading the file.
type Placed interface {
	Matcher
	// Placed returns the positions, ascending, of the rows of data file
	// f the matcher picks, each with its encoded key; ok is false when
	// it does not know them (the file is read).
	Placed(f iceberg.DataFile) (pos []int64, keys []string, ok bool)
}

// locator finds the positions of the rows a Matcher picks in a
// partition's data files, reading only the matcher's columns, every row
// in file order, and skipping the positions the files' delete files
// already delete.
type Locator struct {
	tbl       *icetable.Table
	m         Matcher
	batchRows int
	deletes   *Deletes
	// rowIDs, when not nil, gets the current _row_id of each live row the
	// matcher picks by key, by encoded key (the first found when a key has
	// several): the id the row's replacement keeps.
	rowIDs map[string]int64
	// explicitIDs reads the _row_id column of a batch scanned with it
	// selected (see KeepRowIDs).
	explicitIDs func(arrow.RecordBatch) (*array.Int64, error)
}

// NewLocator returns a Locator of the rows m picks in tbl's data files,
// read in Arrow batches of batchRows rows.
func NewLocator(ctx context.Context, tbl *icetable.Table, m Matcher, batchRows int) (*Locator, error) {
	d, err := NewDeletes(ctx, tbl)
	if err != nil {
		return nil, err
	}
	return &Locator{tbl: tbl, m: m, batchRows: batchRows, deletes: d}, nil
}

// KeepRowIDs makes [Locator.Locate] note the current _row_id of each live
// row the matcher picks by key ([Locator.RowIDs]): explicit reads the
// file's own _row_id values of a batch scanned with that column selected
// and no first_row_id (null where the id is inherited); an inherited id
// is the file's first_row_id plus the row's position.
func (l *Locator) KeepRowIDs(explicit func(arrow.RecordBatch) (*array.Int64, error)) {
	l.rowIDs, l.explicitIDs = map[string]int64{}, explicit
}

// RowIDs are the _row_id values Locate noted, by encoded key (nil unless
// [Locator.KeepRowIDs]): the first found in task order when a key has
// several rows.
func (l *Locator) RowIDs() map[string]int64 { return l.rowIDs }

// Locate returns, for each of tasks (the data files of one partition),
// the live positions its matcher picks. Files without a hit are left out.
// Files are read in parallel, up to GOMAXPROCS at a time (each file
// reads on one goroutine); the result is the same as reading them one
// after the other in task order.
func (l *Locator) Locate(ctx context.Context, tasks []icetable.FileScanTask) ([]Located, error) {
	var todo []int
	for i, t := range tasks {
		if len(t.EqualityDeleteFiles) > 0 {
			return nil, ErrEqualityDeletes
		}
		if l.m.MayHold(t.File) {
			todo = append(todo, i)
		}
	}
	type fileResult struct {
		hit     []int64
		exist   *dv.RoaringPositionBitmap
		carried *dv.RoaringPositionBitmap
		scoped  []iceberg.DataFile
		rowIDs  map[string]int64
		done    bool
		err     error
	}
	res := make([]fileResult, len(tasks))
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(len(todo), runtime.GOMAXPROCS(0)) {
		m := l.m.Fork()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := &res[i]
				if r.exist, r.carried, r.scoped, r.err = l.deletes.of(tasks[i]); r.err == nil {
					r.hit, r.rowIDs, r.err = l.find(ctx, m, tasks[i], r.exist)
					if r.err != nil {
						r.err = fmt.Errorf("data file %s: %w", tasks[i].File.FilePath(), r.err)
					}
				}
				r.done = true
				if r.err != nil {
					cancel()
				}
			}
		}()
	}
feed:
	for _, i := range todo {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	// The first error in task order that is not a cancellation another
	// file's error caused; a file left unread means the caller cancelled.
	var first error
	for _, i := range todo {
		switch err := res[i].err; {
		case err != nil && !errors.Is(err, context.Canceled):
			return nil, err
		case err != nil && first == nil:
			first = err
		case err == nil && !res[i].done && first == nil:
			first = context.Cause(parent)
		}
	}
	if first != nil {
		return nil, first
	}
	var out []Located
	for _, i := range todo {
		r := res[i]
		for key, id := range r.rowIDs {
			if _, seen := l.rowIDs[key]; !seen {
				l.rowIDs[key] = id // the first file's in task order, as read one by one
			}
		}
		if len(r.hit) > 0 {
			out = append(out, Located{task: tasks[i], existing: r.exist, hit: r.hit, scoped: r.scoped, carried: r.carried})
		}
	}
	return out, nil
}

// find returns what scan does: from the matcher when it knows where its
// rows are in t's data file (a Placed matcher) and no _row_id has to be
// read from the file, else by scan.
func (l *Locator) find(ctx context.Context, m Matcher, t icetable.FileScanTask, existing *dv.RoaringPositionBitmap) ([]int64, map[string]int64, error) {
	p, ok := m.(Placed)
	if !ok || l.rowIDs != nil && (t.FirstRowID == nil || mayHoldRowIDs(l.tbl.Schema(), t.File)) {
		return l.scan(ctx, m, t, existing)
	}
	pos, keys, ok := p.Placed(t.File)
	if !ok {
		return l.scan(ctx, m, t, existing)
	}
	var (
		hit    []int64
		rowIDs map[string]int64
	)
	if l.rowIDs != nil {
		rowIDs = map[string]int64{}
	}
	for i, at := range pos {
		if existing.Contains(uint64(at)) {
			continue
		}
		hit = append(hit, at)
		if _, seen := rowIDs[keys[i]]; rowIDs != nil && !seen {
			rowIDs[keys[i]] = *t.FirstRowID + at // inherited: the file holds no _row_id
		}
	}
	return hit, rowIDs, nil
}

// scan reads the matcher's columns of t's data file, every row in file
// order (no delete applied), and returns the positions not in existing
// that the matcher picks; with rowIDs, it also notes their _row_id: read
// from the file when it may hold explicit ones, else inherited, its
// first_row_id plus the position.
func (l *Locator) scan(ctx context.Context, m Matcher, t icetable.FileScanTask, existing *dv.RoaringPositionBitmap) ([]int64, map[string]int64, error) {
	fileScans.Add(1)
	f := t.File
	task := icetable.FileScanTask{File: f, Length: f.FileSizeBytes()}
	read := m.ReadSchema()
	names := make([]string, 0, len(read.Fields())+1)
	for _, fld := range read.Fields() {
		names = append(names, fld.Name)
	}
	// The file's own _row_id values, nulls included: the task has no
	// first_row_id, so iceberg-go does not fill in every row's inherited
	// id; only the picked rows' are worked out, below.
	var rowIDs map[string]int64
	if l.rowIDs != nil {
		rowIDs = map[string]int64{}
	}
	readIDs := rowIDs != nil && mayHoldRowIDs(l.tbl.Schema(), f)
	if readIDs {
		names = append(names, iceberg.RowIDColumnName)
	}
	sc, batches, err := l.tbl.Scan(icetable.WithSelectedFields(names...), icetable.WithMaxConcurrency(1), icetable.WithArrowBatchSize(l.batchRows)).
		ReadTasks(ctx, []icetable.FileScanTask{task})
	if err != nil {
		return nil, nil, err
	}
	res, err := schema.Resolve(sc, read, l.tbl.NameMapping(), schema.IgnoreUnknown)
	if err != nil {
		return nil, nil, err
	}
	var (
		hit []int64
		pos int64
	)
	for raw, err := range batches {
		if err != nil {
			return nil, nil, err
		}
		var ids *array.Int64
		if readIDs {
			if ids, err = l.explicitIDs(raw); err != nil {
				raw.Release()
				return nil, nil, err
			}
			ids.Retain()
		}
		rec, err := res.Apply(ctx, raw)
		raw.Release()
		if err != nil {
			return nil, nil, err
		}
		first := pos
		err = m.Match(ctx, rec, func(row int, key []byte) {
			p := first + int64(row)
			if existing.Contains(uint64(p)) {
				return
			}
			hit = append(hit, p)
			if _, seen := rowIDs[string(key)]; rowIDs != nil && key != nil && !seen {
				if ids != nil && ids.IsValid(row) {
					rowIDs[string(key)] = ids.Value(row)
				} else {
					rowIDs[string(key)] = *t.FirstRowID + p // inherited
				}
			}
		})
		if ids != nil {
			ids.Release()
		}
		pos += rec.NumRows()
		rec.Release()
		if err != nil {
			return nil, nil, err
		}
	}
	if pos != f.Count() {
		return nil, nil, fmt.Errorf("read %d rows, the manifest says %d: positions would be wrong", pos, f.Count())
	}
	return hit, rowIDs, nil
}

// mayHoldRowIDs reports whether data file f (of a table of schema sc)
// may hold explicit _row_id values: false when its metrics show that it
// has no such column (value counts of every top-level primitive column
// of the table, none of it) or that every value is null; then every
// row's id is inherited and need not be read.
func mayHoldRowIDs(sc *iceberg.Schema, f iceberg.DataFile) bool {
	counts := f.ValueCounts()
	n, ok := counts[iceberg.RowIDFieldID]
	if ok {
		nulls, ok := f.NullValueCounts()[iceberg.RowIDFieldID]
		return !ok || nulls < n
	}
	for _, fld := range sc.Fields() {
		if _, primitive := fld.Type.(iceberg.PrimitiveType); !primitive {
			continue
		}
		if _, ok := counts[fld.ID]; !ok {
			return true // metrics not kept for every column: the file has to tell
		}
	}
	return false
}
