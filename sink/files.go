package sink

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"io/fs"

	"github.com/icerun/icerun/internal/writeprops"
	"github.com/icerun/icerun/table"
)

// fileStream writes the rows of one pending batch to data files as they
// arrive, with iceberg-go's WriteRecords (rolling at the target file size,
// one writer per table partition) running in a goroutine that ends with
// finish or abort. Its memory is the open writers' row groups, whatever the
// batch's size. Every file it makes is named after its write UUID. Not safe
// for concurrent use.
type fileStream struct {
	tbl    *icetable.Table
	ch     chan arrow.RecordBatch
	cancel context.CancelFunc
	done   chan struct{}

	rows int64 // handed to the writers

	mu    sync.Mutex
	files []iceberg.DataFile
	err   error
}

// ErrIncompleteWrite is [table.ErrIncompleteWrite], one error for every
// writer: the data files written hold fewer rows than the sink handed the
// writers (iceberg-go v0.7.0 can drop the rows of a file whose creation
// failed without reporting the error). Nothing is committed; the batch is
// replayed from the table's positions.
var ErrIncompleteWrite = table.ErrIncompleteWrite

// writerTable is tbl as the data file writers take it: without its sort
// order when they cannot apply it (another engine's order on a nested or
// dropped column: the files are written unsorted and claim none).
func writerTable(tbl *icetable.Table) (*icetable.Table, error) {
	if writeprops.WritersSort(tbl.Metadata()) {
		return tbl, nil
	}
	return writeprops.Unsorted(tbl)
}

func startFiles(ctx context.Context, tbl *icetable.Table, sc *arrow.Schema, cfg *config) *fileStream {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx)) // outlives the Write that started it; ended by finish or abort
	fs := &fileStream{tbl: tbl, ch: make(chan arrow.RecordBatch, 4), cancel: cancel, done: make(chan struct{})}
	opts := []icetable.WriteRecordOption{icetable.WithWriteUUID(uuid.New()), icetable.WithParquetRowGroupLimit(cfg.rowGroupRows)}
	if cfg.targetFileSize > 0 {
		opts = append(opts, icetable.WithTargetFileSize(cfg.targetFileSize))
	}
	rows := func(yield func(arrow.RecordBatch, error) bool) {
		for rec := range fs.ch {
			if !yield(rec, nil) {
				for rec := range fs.ch { // drain: add must never block on a stopped writer
					rec.Release()
				}
				return
			}
		}
	}
	go func() {
		defer close(fs.done)
		for f, err := range icetable.WriteRecords(ctx, tbl, sc, rows, opts...) {
			fs.mu.Lock()
			if err != nil {
				fs.err = err
			} else {
				fs.files = append(fs.files, f)
			}
			fs.mu.Unlock()
			if err != nil {
				break
			}
		}
		for rec := range fs.ch {
			rec.Release()
		}
	}()
	return fs
}

// add hands rec (owned by the stream from now on) to the writers.
func (fs *fileStream) add(ctx context.Context, rec arrow.RecordBatch) error {
	if err := fs.failed(); err != nil {
		rec.Release()
		return err
	}
	n := rec.NumRows()
	select {
	case fs.ch <- rec:
		fs.rows += n
		return nil
	case <-ctx.Done():
		rec.Release()
		return context.Cause(ctx)
	}
}

func (fs *fileStream) failed() error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.err
}

// finish closes the last files and returns them all; on error, it removes
// what it wrote.
func (fs *fileStream) finish(ctx context.Context) ([]iceberg.DataFile, error) {
	close(fs.ch)
	<-fs.done
	fs.cancel()
	if fs.err == nil {
		var n int64
		for _, f := range fs.files {
			n += f.Count()
		}
		if n != fs.rows {
			fs.err = fmt.Errorf("%w: the data files hold %d rows, %d were written", ErrIncompleteWrite, n, fs.rows)
		}
	}
	if fs.err != nil {
		return nil, errors.Join(fs.err, removeFiles(ctx, fs.tbl, fs.files))
	}
	return fs.files, nil
}

// abort stops the writers and removes the files they finished. A file in
// progress when abort stopped its writer may stay: an orphan, never
// referenced by the table, that cleanup.Orphans removes.
func (fs *fileStream) abort(ctx context.Context) error {
	fs.cancel()
	close(fs.ch)
	<-fs.done
	return removeFiles(ctx, fs.tbl, fs.files)
}

// removeFiles removes data files that no commit references.
func removeFiles(ctx context.Context, tbl *icetable.Table, files []iceberg.DataFile) error {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.FilePath()
	}
	return removePaths(ctx, tbl, paths)
}

// removePaths removes the files at paths of tbl's file IO; a file already
// gone is no error.
func removePaths(ctx context.Context, tbl *icetable.Table, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range paths {
		if err := fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
