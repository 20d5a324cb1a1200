package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// files reads Parquet files one after the other as one RecordReader; their
// Arrow schemas must be equal.
type files struct {
	ctx   context.Context
	paths []string
	next  int
	pf    *file.Reader
	cur   pqarrow.RecordReader
	sc    *arrow.Schema
	err   error
}

// readFiles opens the first of paths (sorted .parquet files).
func readFiles(ctx context.Context, paths []string) (*files, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no Parquet file")
	}
	f := &files{ctx: ctx, paths: paths}
	if err := f.open(); err != nil {
		return nil, err
	}
	f.sc = f.cur.Schema()
	return f, nil
}

// readDir reads the .parquet files of dir, sorted by name.
func readDir(ctx context.Context, dir string) (*files, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".parquet") {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(paths)
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: no .parquet file", dir)
	}
	return readFiles(ctx, paths)
}

func (f *files) open() error {
	f.close()
	p := f.paths[f.next]
	f.next++
	pf, err := file.OpenParquetFile(p, false)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 8192}, memory.DefaultAllocator)
	if err != nil {
		pf.Close()
		return fmt.Errorf("%s: %w", p, err)
	}
	rr, err := fr.GetRecordReader(f.ctx, nil, nil)
	if err != nil {
		pf.Close()
		return fmt.Errorf("%s: %w", p, err)
	}
	if f.sc != nil && !f.sc.Equal(rr.Schema()) {
		rr.Release()
		pf.Close()
		return fmt.Errorf("%s: schema differs from %s", p, f.paths[0])
	}
	f.pf, f.cur = pf, rr
	return nil
}

func (f *files) close() {
	if f.cur != nil {
		f.cur.Release()
		f.cur = nil
	}
	if f.pf != nil {
		f.pf.Close()
		f.pf = nil
	}
}

func (f *files) Retain()                        {}
func (f *files) Release()                       { f.close() }
func (f *files) Schema() *arrow.Schema          { return f.sc }
func (f *files) RecordBatch() arrow.RecordBatch { return f.cur.RecordBatch() }
func (f *files) Record() arrow.RecordBatch      { return f.cur.RecordBatch() }
func (f *files) Err() error                     { return f.err }

func (f *files) Next() bool {
	for f.err == nil && f.cur != nil {
		if f.cur.Next() {
			return true
		}
		if err := f.cur.Err(); err != nil {
			f.err = err
			return false
		}
		if f.next == len(f.paths) {
			return false
		}
		f.err = f.open()
	}
	return false
}

var _ array.RecordReader = (*files)(nil)
