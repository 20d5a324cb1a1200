package table

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	_ "github.com/icerun/icerun/internal/pagecodec"
	"github.com/icerun/icerun/internal/spillsort"
	"github.com/icerun/icerun/partition"
)

// stager writes resolved batches to new Parquet data files of tbl, with up
// to maxWriters iceberg-go writers (table.WriteRecords) encoding at once.
// Each writer gets its own write UUID, so every file it makes is named
// after it and can be found and removed if the replacement fails.
//
// The stager owns the batches passed to add. Not safe for concurrent use.
type stager struct {
	ctx        context.Context
	cancel     context.CancelCauseFunc
	tbl        *icetable.Table
	write      *icetable.Table // what the writers write to: tbl with its write properties applied (filesize.go)
	schema     *arrow.Schema
	splitRows  int64
	maxWriters int
	paths      dataPaths         // where the data files are created (datapath.go)
	failed     ioFailure         // the first failed create or write of a data file (iofailure.go)
	sort       *spillsort.Sorter // nil unless rows are written in the table's sort order
	sortID     int               // the id of that order
	// spec is tbl's partition spec, compiled (nil when iceberg-go's writer
	// does not partition: no fields, or only void ones); specErr is why it
	// could not be compiled.
	spec    *partition.Spec
	specErr error
	// whole writes every row when they are all in one known partition
	// (writeOnly: whole.keyed is set) or are not routed by key; byKey
	// writes the rows of each partition of a dynamic write (route.go).
	whole    group
	byKey    map[partition.Key]*group
	unrouted bool                     // tests: iceberg-go's partitioned writer partitions every row
	folders  map[string]partition.Key // data folder -> the key writing it (route.go)
	streams  []*stream                // every stream started
	rows     int64
	finished bool
	lineage  bool // the rows carry _row_id and _last_updated_sequence_number (preserveLineage)

	wg    sync.WaitGroup
	mu    sync.Mutex
	files []iceberg.DataFile
	err   error
}

type stream struct {
	id    uuid.UUID
	ch    chan arrow.RecordBatch
	keyed *keyedWrite // the group's: nil unless the stream's rows are all in one known partition
	rows  int64
	lag   int64 // rows this stream stays behind the first of its group, see routeTo
}

func newStager(ctx context.Context, tbl *icetable.Table, sc *arrow.Schema, cfg config) *stager {
	ctx, cancel := context.WithCancelCause(ctx)
	s := &stager{ctx: ctx, cancel: cancel, tbl: tbl, schema: sc, splitRows: cfg.splitRows, maxWriters: cfg.maxWriters, paths: newDataPaths(tbl)}
	if !tbl.Spec().IsUnpartitioned() {
		s.spec, s.specErr = partition.NewSpec(tbl.Spec(), tbl.Schema())
	}
	var err error
	if s.write, err = writeView(tbl, false, cfg.rowGroupRows); err != nil { // add and finish report it
		s.write, s.err = tbl, err
		cancel(err)
	}
	return s
}

// writeOnly declares that every row added is in partition key of spec
// (the caller has checked them), so the writers need not partition them.
// It must be called before the first add, after sorted.
func (s *stager) writeOnly(spec *partition.Spec, key partition.Key) error {
	k, err := newKeyedWrite(s.write, spec, key)
	if err != nil {
		return err
	}
	s.whole.keyed = k
	return nil
}

// preserveLineage makes the stager write the row lineage columns
// (rowlineage.go): every batch added then ends with them. It must be
// called before sorted and the first add.
func (s *stager) preserveLineage() {
	s.schema = withLineageFields(s.schema)
	s.lineage = true
}

// sorted makes the stager write the rows in the table's default sort
// order, and every file it writes claim that order (sort_order_id), when
// the order is one icerun sorts by (see sortOrder); otherwise the files
// make no claim. cfg sets the run size (splitRows). It must be called
// before writeOnly and the first add.
func (s *stager) sorted(cfg config) error {
	order := newSortOrder(s.tbl.Metadata(), s.schema)
	if order == nil {
		return nil
	}
	view, err := writeView(s.tbl, true, cfg.rowGroupRows) // icerun sorts: iceberg-go's per-batch sort is off
	if err != nil {
		return err
	}
	s.write = view
	s.sort = spillsort.New(spillsort.Config{
		Schema:    s.schema,
		Compare:   order.compare,
		RunRows:   cfg.splitRows,
		BatchRows: mergeBatchRows,
		Dir:       strings.TrimSuffix(s.tbl.Location(), "/") + "/data",
		FS:        s.tbl.FS,
	})
	s.sortID = order.id
	return nil
}

// add takes rec: to the sorter when the stager sorts, else to a writer.
// A batch without rows is dropped: iceberg-go would write a data file of
// 0 records for it.
func (s *stager) add(rec arrow.RecordBatch) error {
	if rec.NumRows() == 0 {
		rec.Release()
		return nil
	}
	if s.sort != nil {
		return s.sort.Add(s.ctx, rec)
	}
	return s.route(rec)
}

// route hands rec to the writers: the rows of each partition to the
// partition's own when the stager routes by key (route.go), else to the
// stager's.
func (s *stager) route(rec arrow.RecordBatch) error {
	if s.routesKeys() {
		return s.routeKeys(rec)
	}
	return s.routeTo(&s.whole, rec)
}

// routeTo hands rec to the least loaded writer of g, starting a new writer
// when all of g's running ones have had splitRows rows.
//
// The k-th of n writers is kept k/n of a row group (or of splitRows, when
// smaller) behind the first, so that their row groups fill and flush in
// turn: an encoder buffers its whole row group, and writers kept in step
// would all hold a full one at the same moment, the write's peak memory.
func (s *stager) routeTo(g *group, rec arrow.RecordBatch) error {
	if len(g.streams) == 0 || (len(g.streams) < s.maxWriters && g.rows >= s.splitRows*int64(len(g.streams))) {
		s.start(g)
	}
	st := g.streams[0]
	for _, o := range g.streams[1:] {
		if o.rows+o.lag < st.rows+st.lag {
			st = o
		}
	}
	st.rows += rec.NumRows()
	g.rows += rec.NumRows()
	s.rows += rec.NumRows()
	g.seen = s.rows
	select {
	case st.ch <- rec:
		return nil
	case <-s.ctx.Done():
		rec.Release()
		return context.Cause(s.ctx)
	}
}

func (s *stager) start(g *group) {
	st := &stream{id: uuid.New(), ch: make(chan arrow.RecordBatch), keyed: g.keyed, lag: int64(len(g.streams)) * min(s.rowGroupRows(), s.splitRows) / int64(s.maxWriters)}
	g.streams = append(g.streams, st)
	s.streams = append(s.streams, st)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		// Two batches queued per encoder (iceberg-go's default is 64) keep
		// memory flat in the partition's size.
		opts := []icetable.WriteRecordOption{icetable.WithWriteUUID(st.id), icetable.WithRecordBatchBufferSize(2), icetable.WithMaxWriteWorkers(1)}
		if s.lineage {
			opts = append(opts, icetable.WithPreserveRowLineage(iceberg.SchemaWithRowLineage(s.tbl.Schema())))
		}
		tbl := s.write
		if st.keyed != nil {
			tbl = st.keyed.view
		}
		files := icetable.WriteRecords(s.ctx, s.paths.writing(tbl, &s.failed), s.schema, drain(st.ch), opts...)
		for f, err := range files {
			if f != nil {
				// On an error f stays as written, listed for removal
				// (removeUnlisted finds it at its real location).
				if g, ferr := s.file(st, f); ferr != nil && err == nil {
					err = ferr
				} else if ferr == nil {
					f = g
				}
			}
			s.mu.Lock()
			if err != nil && (s.err == nil || errors.Is(s.err, icetable.ErrWriterClosed) && !errors.Is(err, icetable.ErrWriterClosed)) {
				// iceberg-go reports a writer that stopped on an error
				// as closed before (or instead of) that error: the
				// error, when it comes, is the cause to report.
				s.err = err
				s.cancel(err)
			}
			if f != nil {
				s.files = append(s.files, f)
			}
			s.mu.Unlock()
		}
		// The writer is done. Should it have stopped reading before the
		// input ended (iceberg-go can stop on a failed file without an
		// error), keep receiving so that add never blocks; checkRows then
		// reports the rows that were not written.
		for r := range st.ch {
			r.Release()
		}
	}()
}

// file is f as the table records it: with the partition values of its
// key (the keyed write's, or the canonical values of the key the writer's
// values make: an empty binary value of an Arrow array without a value
// buffer is []byte(nil), which a manifest would record as null), claiming
// the sort order when the stager sorted, at the location the file was
// created at (see dataPaths).
func (s *stager) file(st *stream, f iceberg.DataFile) (iceberg.DataFile, error) {
	var sortID *int
	if s.sort != nil {
		sortID = &s.sortID
	}
	path := s.paths.real(f.FilePath())
	switch {
	case st.keyed != nil:
		return rebuildFile(f, path, st.keyed.spec, st.keyed.values, sortID)
	case s.specErr != nil:
		return nil, s.specErr
	case s.spec == nil && sortID == nil && path == f.FilePath():
		return f, nil
	case s.spec == nil:
		return rebuildFile(f, path, s.tbl.Spec(), f.Partition(), sortID)
	}
	values, err := canonicalValues(s.spec, f)
	if err != nil {
		return nil, err
	}
	return rebuildFile(f, path, s.tbl.Spec(), values, sortID)
}

// rowGroupRows is the Parquet row-group row limit the writers use: their
// view's write.parquet.row-group-limit, or iceberg-go's default.
func (s *stager) rowGroupRows() int64 {
	tbl := s.write
	if tbl == nil {
		tbl = s.tbl
	}
	if n, err := strconv.ParseInt(tbl.Properties()[icetable.ParquetRowGroupLimitKey], 10, 64); err == nil && n > 0 {
		return n
	}
	return icetable.ParquetRowGroupLimitDefault
}

// drain yields the batches of ch; when the consumer stops early it keeps
// receiving and releasing them until ch is closed, so senders never block.
func drain(ch chan arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for rec := range ch {
			if !yield(rec, nil) {
				for r := range ch {
					r.Release()
				}
				return
			}
		}
	}
}

// finish waits for every writer and returns the files written.
func (s *stager) finish() ([]iceberg.DataFile, error) {
	if !s.finished {
		s.finished = true
		if s.sort != nil {
			err := s.ctx.Err()
			if err == nil {
				err = s.sort.Drain(s.ctx, s.route)
			}
			if rerr := s.sort.Release(s.ctx); err == nil {
				err = rerr
			}
			if err != nil {
				s.mu.Lock()
				if s.err == nil {
					s.err = err
				}
				s.mu.Unlock()
				s.cancel(err)
			}
		}
		s.whole.close()
		for _, g := range s.byKey {
			g.close()
		}
		s.wg.Wait()
		s.cancel(nil)
		if s.err == nil {
			s.err = s.checkRows()
		}
		if cause := s.failed.first(); cause != nil && (errors.Is(s.err, icetable.ErrWriterClosed) || errors.Is(s.err, ErrIncompleteWrite)) {
			// iceberg-go lost the cause (see ioFailure).
			s.err = fmt.Errorf("%w: %w", ErrIncompleteWrite, cause)
		}
	}
	return s.files, s.err
}

// ErrIncompleteWrite means the Parquet files written hold fewer rows than
// the input: a file write failed and iceberg-go did not report why (it can
// drop the error of a failed file). Nothing was committed.
var ErrIncompleteWrite = errors.New("table: a data file write failed")

// checkRows fails when the files written hold fewer rows than were added:
// iceberg-go v0.7.0 can drop the batches of a file whose creation failed
// without reporting the error (the failed partition writer leaves the
// writer set before its error is read). Found by the reruntest kit.
func (s *stager) checkRows() error {
	var n int64
	for _, f := range s.files {
		n += f.Count()
	}
	if n != s.rows {
		return fmt.Errorf("%w: the data files written hold %d rows, %d were given", ErrIncompleteWrite, n, s.rows)
	}
	return nil
}

// abort stops the writers and removes every file they wrote, including
// partial files of a writer that failed: those were never yielded, so the
// table's data folder is searched for files named after the stager's
// write UUIDs.
func (s *stager) abort(cause error) error {
	s.cancel(cause)
	files, _ := s.finish()
	if err := s.remove(files); err != nil {
		return err
	}
	return s.removeUnlisted(files)
}

// remove deletes files, the complete list of what a finished stager wrote.
func (s *stager) remove(files []iceberg.DataFile) error {
	return removeFiles(s.ctx, s.tbl, files)
}

// removeUnlisted deletes the files under the table's data folder that are
// named after one of the stager's write UUIDs but are not in listed.
func (s *stager) removeUnlisted(listed []iceberg.DataFile) error {
	fsys, err := s.tbl.FS(context.WithoutCancel(s.ctx))
	if err != nil {
		return err
	}
	done := make(map[string]bool, len(listed))
	for _, f := range listed {
		done[f.FilePath()] = true
	}
	var errs []error
	lister, ok := fsys.(iceio.ListableIO)
	if !ok || len(s.streams) == 0 {
		return nil
	}
	walkErr := lister.WalkDir(strings.TrimSuffix(s.tbl.Location(), "/")+"/data", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || done[path] {
			return nil
		}
		for _, st := range s.streams {
			if strings.Contains(path, st.id.String()) {
				if err := fsys.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
			}
		}
		return nil
	})
	if walkErr != nil && !errors.Is(walkErr, fs.ErrNotExist) {
		errs = append(errs, walkErr)
	}
	return errors.Join(errs...)
}

// removeFiles deletes staged files no snapshot references (files that do
// not exist are not an error).
func removeFiles(ctx context.Context, tbl *icetable.Table, files []iceberg.DataFile) error {
	if len(files) == 0 {
		return nil
	}
	fsys, err := tbl.FS(context.WithoutCancel(ctx))
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range files {
		if err := fsys.Remove(f.FilePath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
