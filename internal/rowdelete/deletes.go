package rowdelete

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
)

// Deletes reads the positions a data file's delete files delete (its
// deletion vector and its position delete files), reading each position
// delete file once however many data files it covers. Safe for
// concurrent use.
type Deletes struct {
	fsys       iceio.IO
	mu         sync.Mutex                    // guards posDeletes
	posDeletes map[string]map[string][]int64 // position delete file -> data file -> positions
}

// NewDeletes returns a Deletes of tbl's files.
func NewDeletes(ctx context.Context, tbl *icetable.Table) (*Deletes, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	return &Deletes{fsys: fsys, posDeletes: map[string]map[string][]int64{}}, nil
}

// Of are the positions of t's data file that t's delete files delete.
// A task with equality deletes fails with [ErrEqualityDeletes]: positions
// alone do not say which of its rows are live.
func (d *Deletes) Of(t icetable.FileScanTask) (*dv.RoaringPositionBitmap, error) {
	if len(t.EqualityDeleteFiles) > 0 {
		return nil, ErrEqualityDeletes
	}
	existing, _, _, err := d.of(t)
	return existing, err
}

// deleted are the positions of t's data file that its delete files
// delete: its deletion vector and its position delete files; carried are
// those of its file-scoped position delete files, scoped.
func (d *Deletes) of(t icetable.FileScanTask) (existing, carried *dv.RoaringPositionBitmap, scoped []iceberg.DataFile, err error) {
	existing, carried = dv.NewRoaringPositionBitmap(), dv.NewRoaringPositionBitmap()
	for _, f := range slices.Concat(t.DeletionVectorFiles, t.DeleteFiles) {
		if icetable.IsDeletionVector(f) {
			b, err := dv.ReadDV(d.fsys, f)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("deletion vector %s: %w", f.FilePath(), err)
			}
			existing.Or(b)
			continue
		}
		byFile, err := d.positionDeletes(f)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("position delete file %s: %w", f.FilePath(), err)
		}
		own := fileScoped(f) == t.File.FilePath()
		if own {
			scoped = append(scoped, f)
		}
		for _, p := range byFile[t.File.FilePath()] {
			existing.Set(uint64(p))
			if own {
				carried.Set(uint64(p))
			}
		}
	}
	return existing, carried, scoped, nil
}

// fileScoped is the data file whose rows position delete file f deletes
// when it deletes rows of one data file only: its referenced_data_file,
// else the file_path column's bounds when they are equal (as Java's
// ContentFileUtil.referencedDataFile reads them); "" when f may delete
// rows of several.
func fileScoped(f iceberg.DataFile) string {
	if p := f.ReferencedDataFile(); p != nil {
		return *p
	}
	lo, ok1 := f.LowerBoundValues()[posDeleteFilePathID]
	hi, ok2 := f.UpperBoundValues()[posDeleteFilePathID]
	if ok1 && ok2 && len(lo) > 0 && string(lo) == string(hi) {
		return string(lo)
	}
	return ""
}

// positionDeletes reads a position delete file (Parquet: file_path, pos),
// once: the positions it deletes of each data file it names.
func (d *Deletes) positionDeletes(f iceberg.DataFile) (map[string][]int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if m, ok := d.posDeletes[f.FilePath()]; ok {
		return m, nil
	}
	if m, ok := positions.get(f.FilePath()); ok {
		d.posDeletes[f.FilePath()] = m
		return m, nil
	}
	if f.FileFormat() != iceberg.ParquetFile {
		return nil, fmt.Errorf("%w: position delete file format %s", ErrEqualityDeletes, f.FileFormat())
	}
	m, err := readPositionFile(d.fsys, f.FilePath(), fileScoped(f))
	if err != nil {
		return nil, err
	}
	d.posDeletes[f.FilePath()] = m
	positions.put(f.FilePath(), m)
	return m, nil
}
