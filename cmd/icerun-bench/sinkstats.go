package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
)

// sinkStats is what the table shows after a trial.
type sinkStats struct {
	n          int64   // measured messages
	span       float64 // seconds from the first measured message produced to the last one visible
	ingest     float64 // rows/s added between the first and the last commit within the measured window (NaN with fewer than 3)
	commits    int     // snapshots within the span
	p50, p99   float64 // produce-to-visible seconds
	files      int
	manifests  int
	check      string // "" when the table holds exactly the produced messages
	totalRows  int64
	snapshots  int
	warmUpRows int64
}

func (s sinkStats) rate() float64 { return float64(s.n) / s.span }

func (s sinkStats) commitsPerSec() float64 { return float64(s.commits) / s.span }

// tableStats reads back every live data file of the table, and for each
// row the timestamp of the snapshot that added its file: the row's
// visibility. It checks that the table holds each produced id once.
func tableStats(ctx context.Context, cat catalog.Catalog, p *producer, start, end time.Time) (sinkStats, error) {
	st := sinkStats{n: p.n, warmUpRows: p.warm}
	tbl, err := cat.LoadTable(ctx, eventsIdent)
	if err != nil {
		return st, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return st, err
	}
	md := tbl.Metadata()
	snap := tbl.CurrentSnapshot()
	st.snapshots = len(md.Snapshots())
	mans, err := snap.Manifests(fs)
	if err != nil {
		return st, err
	}
	st.manifests = len(mans)
	seen := make([]uint8, p.n)    // measured ids
	warm := make([]uint8, p.warm) // warm-up ids -1 ... -warm
	extra := make([]uint8, p.extra)
	var lat []float64
	var last int64 // ms: the last measured row visible
	var stray int64
	for _, m := range mans {
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			return st, err
		}
		for _, e := range entries {
			df := e.DataFile()
			if df.ContentType() != iceberg.EntryContentData {
				return st, fmt.Errorf("unexpected delete file %s", df.FilePath())
			}
			st.files++
			s := md.SnapshotByID(e.SnapshotID())
			if s == nil {
				return st, fmt.Errorf("file %s: snapshot %d not in the metadata", df.FilePath(), e.SnapshotID())
			}
			err = readIDs(ctx, fs, df.FilePath(), func(id, producedUs int64) {
				st.totalRows++
				switch {
				case id >= 0 && id < p.n:
					seen[id]++
					lat = append(lat, float64(s.TimestampMs*1000-producedUs)/1e6)
					last = max(last, s.TimestampMs)
				case id >= p.n && id < p.n+p.extra:
					extra[id-p.n]++
				case id < 0 && -id <= p.warm:
					warm[-id-1]++
				default:
					stray++
				}
			})
			if err != nil {
				return st, err
			}
		}
	}
	st.span = float64(last-start.UnixMilli()) / 1000
	st.ingest = math.NaN()
	var first, final *icetable.Snapshot // the first and last commits within the measured window
	windowCommits := 0
	for _, s := range md.Snapshots() {
		if s.TimestampMs >= start.UnixMilli() && s.TimestampMs <= last {
			st.commits++
		}
		if s.TimestampMs >= start.UnixMilli() && s.TimestampMs <= end.UnixMilli() {
			windowCommits++
			if first == nil {
				first = &s
			}
			final = &s
		}
	}
	if first != nil && windowCommits >= 3 { // a slope between two commits only says when they fell
		st.ingest = float64(totalRecords(final)-totalRecords(first)) / (float64(final.TimestampMs-first.TimestampMs) / 1000)
	}
	slices.Sort(lat)
	st.p50, st.p99 = quantile(lat, 0.50), quantile(lat, 0.99)
	var missing, dup int64
	for _, c := range slices.Concat(seen, warm, extra) {
		if c == 0 {
			missing++
		} else if c > 1 {
			dup += int64(c) - 1
		}
	}
	var bad []string
	if missing > 0 {
		bad = append(bad, fmt.Sprintf("%d missing", missing))
	}
	if dup > 0 {
		bad = append(bad, fmt.Sprintf("%d duplicated", dup))
	}
	if stray > 0 {
		bad = append(bad, fmt.Sprintf("%d never produced", stray))
	}
	if f := p.failures.Load(); f > 0 {
		bad = append(bad, fmt.Sprintf("%d produce failures", f))
	}
	st.check = strings.Join(bad, ", ")
	return st, nil
}

func totalRecords(s *icetable.Snapshot) int64 {
	if s.Summary == nil {
		return 0
	}
	n, _ := strconv.ParseInt(s.Summary.Properties["total-records"], 10, 64)
	return n
}

func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// readIDs calls f with the id and produced_at (microseconds) of every
// row of the Parquet data file at path.
func readIDs(ctx context.Context, fs iceio.IO, path string, f func(id, producedUs int64)) error {
	in, err := fs.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	pr, err := file.NewParquetReader(in)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	cols := []int{pr.MetaData().Schema.ColumnIndexByName("id"), pr.MetaData().Schema.ColumnIndexByName("produced_at")}
	if cols[0] < 0 || cols[1] < 0 {
		return fmt.Errorf("%s: no id or produced_at column", path)
	}
	rr, err := fr.GetRecordReader(ctx, cols, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.Record()
		ids := rec.Column(0).(*array.Int64)
		ts := rec.Column(1).(*array.Timestamp)
		toUs := unitToMicros(ts.DataType().(*arrow.TimestampType).Unit)
		for i := range ids.Len() {
			f(ids.Value(i), toUs(int64(ts.Value(i))))
		}
	}
	return rr.Err()
}

func unitToMicros(u arrow.TimeUnit) func(int64) int64 {
	switch u {
	case arrow.Second:
		return func(v int64) int64 { return v * 1e6 }
	case arrow.Millisecond:
		return func(v int64) int64 { return v * 1e3 }
	case arrow.Nanosecond:
		return func(v int64) int64 { return v / 1e3 }
	}
	return func(v int64) int64 { return v }
}
