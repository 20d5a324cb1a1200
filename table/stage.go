package table

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
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
	schema     *arrow.Schema
	splitRows  int64
	maxWriters int
	streams    []*stream
	rows       int64
	finished   bool

	wg    sync.WaitGroup
	mu    sync.Mutex
	files []iceberg.DataFile
	err   error
}

// rowGroupRows is the Parquet row-group row limit icerun writes with when
// the table does not set write.parquet.row-group-limit.
const rowGroupRows = 256 * 1024

type stream struct {
	id   uuid.UUID
	ch   chan arrow.RecordBatch
	rows int64
}

func newStager(ctx context.Context, tbl *icetable.Table, sc *arrow.Schema, cfg config) *stager {
	ctx, cancel := context.WithCancelCause(ctx)
	return &stager{ctx: ctx, cancel: cancel, tbl: tbl, schema: sc, splitRows: cfg.splitRows, maxWriters: cfg.maxWriters}
}

// add hands rec to the least loaded writer, starting a new writer when all
// running ones have had splitRows rows.
func (s *stager) add(rec arrow.RecordBatch) error {
	if len(s.streams) == 0 || (len(s.streams) < s.maxWriters && s.rows >= s.splitRows*int64(len(s.streams))) {
		s.start()
	}
	st := s.streams[0]
	for _, o := range s.streams[1:] {
		if o.rows < st.rows {
			st = o
		}
	}
	st.rows += rec.NumRows()
	s.rows += rec.NumRows()
	select {
	case st.ch <- rec:
		return nil
	case <-s.ctx.Done():
		rec.Release()
		return context.Cause(s.ctx)
	}
}

func (s *stager) start() {
	st := &stream{id: uuid.New(), ch: make(chan arrow.RecordBatch)}
	s.streams = append(s.streams, st)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		opts := []icetable.WriteRecordOption{icetable.WithWriteUUID(st.id), icetable.WithRecordBatchBufferSize(2), icetable.WithMaxWriteWorkers(1)}
		if _, set := s.tbl.Properties()[icetable.ParquetRowGroupLimitKey]; !set {
			// Bound the rows an encoder buffers before flushing a row group,
			// so memory does not grow with the partition.
			opts = append(opts, icetable.WithParquetRowGroupLimit(rowGroupRows))
		}
		files := icetable.WriteRecords(s.ctx, s.tbl, s.schema, drain(st.ch), opts...)
		for f, err := range files {
			s.mu.Lock()
			if err != nil && s.err == nil {
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
		for _, st := range s.streams {
			close(st.ch)
		}
		s.wg.Wait()
		s.cancel(nil)
		if s.err == nil {
			s.err = s.checkRows()
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
	fsys, err := s.tbl.FS(context.WithoutCancel(s.ctx))
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
