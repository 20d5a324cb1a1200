package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/icerun/icerun/examples/orderdata"
)

// writeParquet writes rdr to path as one zstd Parquet file: the inputs
// every engine reads, and the pqarrow floor.
func writeParquet(path string, rdr array.RecordReader) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithStats(true))
	w, err := pqarrow.NewFileWriter(rdr.Schema(), f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		f.Close()
		return err
	}
	for rdr.Next() {
		if err := w.WriteBuffered(rdr.RecordBatch()); err != nil {
			w.Close()
			return err
		}
	}
	if err := rdr.Err(); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// readParquet opens path as a reader of batch-row batches.
func readParquet(ctx context.Context, path string, batch int64) (array.RecordReader, error) {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, err
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batch}, memory.DefaultAllocator)
	if err != nil {
		pf.Close()
		return nil, err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		pf.Close()
		return nil, err
	}
	return rr, nil
}

// input is one generated input file: orders of days consecutive UTC days
// ending at [day], perDay rows each (upsert: the changed and new rows of
// an upsert into a partition of perDay rows; with newOnly, 20k new rows).
type input struct {
	name         string
	days, perDay int
	upsert       bool
	newOnly      bool
}

func (in input) path(dir string) string {
	return fmt.Sprintf("%s/%s.parquet", dir, in.name)
}

// generate writes the input's file unless it exists.
func (in input) generate(dir string) (string, error) {
	p := in.path(dir)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	sc := orderdata.ArrowSchema()
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	switch {
	case in.upsert && in.newOnly:
		// 20k new orders, above every order of the partition.
		added := make([]orderdata.Order, 20_000)
		for k := range added {
			added[k] = orderdata.At(day, in.perDay+k, in.perDay+20_000)
		}
		recs = append(recs, orderdata.Batch(sc, added))
	case in.upsert:
		// 10k existing orders with a changed amount, spread over the whole
		// partition, then 10k new ones.
		changed, added := make([]orderdata.Order, 10_000), make([]orderdata.Order, 10_000)
		for k := range changed {
			changed[k] = orderdata.At(day, k*(in.perDay/10_000), in.perDay)
			changed[k].Amount++
			added[k] = orderdata.At(day, in.perDay+k, in.perDay+10_000)
		}
		recs = append(recs, orderdata.Batch(sc, changed), orderdata.Batch(sc, added))
	default:
		for d := in.days - 1; d >= 0; d-- {
			s := orderdata.Stream(day.AddDate(0, 0, -d), in.perDay, 65536)
			for s.Next() {
				r := s.RecordBatch()
				r.Retain()
				recs = append(recs, r)
			}
			s.Release()
		}
	}
	rdr, err := array.NewRecordReader(sc, recs)
	if err != nil {
		return "", err
	}
	defer rdr.Release()
	if err := writeParquet(p+".tmp", rdr); err != nil {
		return "", err
	}
	return p, os.Rename(p+".tmp", p)
}

// dayRows returns the rows of the UTC day d in recs (slices of them).
func dayRows(recs []arrow.RecordBatch, d time.Time, col int) []arrow.RecordBatch {
	want := arrow.Date32FromTime(d)
	var out []arrow.RecordBatch
	for _, r := range recs {
		dates := r.Column(col).(*array.Date32).Date32Values()
		lo := -1
		for i, v := range dates {
			if v == want && lo < 0 {
				lo = i
			}
			if v != want && lo >= 0 {
				out = append(out, r.NewSlice(int64(lo), int64(i)))
				lo = -1
			}
		}
		if lo >= 0 {
			out = append(out, r.NewSlice(int64(lo), int64(len(dates))))
		}
	}
	return out
}
