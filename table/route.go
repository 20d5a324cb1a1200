package table

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icerun/icerun/partition"
)

// group is the writers of one partition of a dynamic write (keyed set), or
// of a stager that does not route by key.
type group struct {
	keyed   *keyedWrite // nil: iceberg-go's writer partitions the rows
	streams []*stream   // the running writers
	rows    int64       // rows given to the running writers
	seen    int64       // the stager's row count when the group last got rows
	closes  int         // times its writers were ended before the input did
}

// close ends the group's running writers: each finishes its file. The
// group starts new ones (new files) should it get rows again.
func (g *group) close() {
	for _, st := range g.streams {
		close(st.ch)
	}
	g.streams, g.rows = nil, 0
	g.closes++
}

// routesKeys reports whether the stager writes the rows of each partition
// with writers of the partition's own (a keyed write each), as a static
// replace writes its one partition: rows of a partitioned table whose
// partition is not known in advance.
//
// iceberg-go's partitioned writer computes every row's partition again
// and keeps a file open per partition and writer until the input ends,
// each with its buffered row group and column encoders: a dynamic write
// of 30 daily partitions held 60 files open and about 380 MB at its peak.
// Here a partition's writers end (and free their memory) once the input
// has moved on by [stager.splitRows] rows without a row of it, and a
// partition large enough gets several writers, encoding in parallel, as a
// static replace does.
func (s *stager) routesKeys() bool {
	return s.spec != nil && s.whole.keyed == nil && !s.unrouted
}

// routeKeys splits rec by partition and hands each partition's rows to its
// group. Rows whose keys cannot be computed here go to iceberg-go's
// partitioned writer (s.whole), which finds their partitions itself.
func (s *stager) routeKeys(rec arrow.RecordBatch) error {
	keys, rowKey, err := s.spec.RowKeys(rec)
	if err != nil {
		return s.routeTo(&s.whole, rec)
	}
	batchStart := s.rows
	parts, err := splitByKey(s.ctx, rec, len(keys), rowKey)
	rec.Release()
	if err != nil {
		return err
	}
	for i, k := range keys {
		g, err := s.group(k)
		if err == nil {
			err = s.routeTo(g, parts[i])
		} else {
			parts[i].Release()
		}
		if err != nil {
			for _, p := range parts[i+1:] {
				p.Release()
			}
			return err
		}
	}
	s.closeIdle(batchStart)
	return nil
}

// group returns the group of key k, made on its first rows. Two keys whose
// data folders are spelled alike (a null string and the string "null")
// fail with ErrSharedPartitionPath, as iceberg-go's partitioned writer,
// which took them for one partition, made icerun fail before.
func (s *stager) group(k partition.Key) (*group, error) {
	if g, ok := s.byKey[k]; ok {
		return g, nil
	}
	kw, err := newKeyedWrite(s.write, s.spec, k)
	if err != nil {
		return nil, err
	}
	if kw == nil { // unpartitioned to iceberg-go: routesKeys is false then
		return &s.whole, nil
	}
	if s.byKey == nil {
		s.byKey, s.folders = make(map[partition.Key]*group), make(map[string]partition.Key)
	}
	if other, ok := s.folders[kw.folder]; ok {
		return nil, fmt.Errorf("%w: keys %s and %s are both written to folder %s", ErrSharedPartitionPath, shortKey(other), shortKey(k), kw.folder)
	}
	s.folders[kw.folder] = k
	g := &group{keyed: kw}
	s.byKey[k] = g
	return g, nil
}

// maxOpenGroups is how many partitions may have running writers before
// those without a row in the latest batch are ended too.
const maxOpenGroups = 64

// closeIdle ends the writers of every partition that has had no row in
// the last splitRows rows of input, and, while more than maxOpenGroups
// partitions have running writers, of every partition without a row in
// the latest batch (which started at row batchStart): input sorted by
// partition, with many small partitions, would otherwise keep every one
// open (each writer holds its encoders and buffered pages). A partition
// whose rows came back after its writers ended is not sorted input: its
// writers run to the end, so that interleaved input makes at most two
// files of a partition, not one per visit.
func (s *stager) closeIdle(batchStart int64) {
	open := 0
	for _, g := range s.byKey {
		if len(g.streams) > 0 {
			open++
		}
	}
	for _, g := range s.byKey {
		if len(g.streams) == 0 || g.closes > 0 {
			continue
		}
		if s.rows-g.seen >= s.splitRows || open > maxOpenGroups && g.seen <= batchStart {
			g.close()
			open--
		}
	}
}

// splitByKey splits rec into the rows of each of n keys (rowKey: each
// row's key index), in row order: slices of rec when every key's rows are
// one run, else slices of rec taken in key order. It releases nothing; the
// parts are the caller's.
func splitByKey(ctx context.Context, rec arrow.RecordBatch, n int, rowKey []int) ([]arrow.RecordBatch, error) {
	parts := make([]arrow.RecordBatch, n)
	if n == 1 {
		rec.Retain()
		parts[0] = rec
		return parts, nil
	}
	// start[k] is where key k's rows begin in key order. RowKeys numbers
	// keys in order of first appearance, so when there is one run per key,
	// key k's run starts at start[k] in rec itself.
	start := make([]int64, n+1)
	runs := 1
	for r, k := range rowKey {
		start[k+1]++
		if r > 0 && k != rowKey[r-1] {
			runs++
		}
	}
	for k := range n {
		start[k+1] += start[k]
	}
	src := rec
	if runs > n {
		// Keys interleave: take the rows in key order (stable within a key).
		next := append([]int64(nil), start[:n]...)
		b := array.NewInt64Builder(memory.DefaultAllocator)
		defer b.Release()
		idx := make([]int64, len(rowKey))
		for r, k := range rowKey {
			idx[next[k]] = int64(r)
			next[k]++
		}
		b.AppendValues(idx, nil)
		indices := b.NewArray()
		defer indices.Release()
		taken, err := compute.Take(ctx, *compute.DefaultTakeOptions(), compute.NewDatumWithoutOwning(rec), compute.NewDatumWithoutOwning(indices))
		if err != nil {
			return nil, err
		}
		src = taken.(*compute.RecordDatum).Value
		defer src.Release()
	}
	for k := range n {
		parts[k] = src.NewSlice(start[k], start[k+1])
	}
	return parts, nil
}
