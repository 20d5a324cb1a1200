package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal"
	"github.com/icerun/icerun/parquetfile"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// request is one peer-bench step, as JSON: for this program's -run and
// -prepare children and for peers/peer.py alike.
type request struct {
	Engine   string `json:"engine"`   // icerun, icerun-mor, raw, pqarrow; pyiceberg, spark-cow, spark-mor, pyarrow
	Scenario string `json:"scenario"` // replace, dynamic, upsert, backfill, floor
	Dir      string `json:"dir"`      // warehouse: catalog.db and the table's files
	Input    string `json:"input"`    // the Parquet input every engine reads
	Output   string `json:"output"`   // floor: the file written
	// prepare: the table's partitions (100 rows each, ending at day) and
	// the rows of day's partition when it is larger (upsert).
	Parts   int `json:"parts,omitempty"`
	DayRows int `json:"day_rows,omitempty"`
	// MORUpserts: after DayRows, that many merge-on-read upserts of 10k
	// changed and 10k new rows (morUpserts); for engine
	// spark-scan-compacted the partition is compacted after them.
	MORUpserts int `json:"mor_upserts,omitempty"`
	// Format is the table's format version ("": iceberg-go's default, 2).
	Format string `json:"format,omitempty"`
}

// outcome is what a measured step prints (seconds).
type outcome struct {
	Wall       float64 `json:"wall"`
	CPU        float64 `json:"cpu"`
	Startup    float64 `json:"startup,omitempty"`
	StartupCPU float64 `json:"startup_cpu,omitempty"`
	First10    float64 `json:"first10,omitempty"`
	Last10     float64 `json:"last10,omitempty"`
}

var benchTable = icetable.Identifier{"bench", "fact_orders"}

// prepare creates the table of req in req.Dir with its partitions,
// loaded in one commit, and day's partition of req.DayRows rows.
func prepare(ctx context.Context, req request) error {
	cat, err := internal.OpenSQLite(ctx, req.Dir)
	if err != nil {
		return err
	}
	if req.Format != "" {
		if err := cat.CreateNamespace(ctx, catalog.NamespaceFromIdent(benchTable), nil); err != nil {
			return err
		}
		spec := orderdata.Spec
		if _, err := cat.CreateTable(ctx, benchTable, orderdata.Schema, catalog.WithPartitionSpec(&spec),
			catalog.WithProperties(iceberg.Properties{"format-version": req.Format})); err != nil {
			return err
		}
	}
	if err := orderdata.CreateTable(ctx, cat, benchTable); err != nil {
		return err
	}
	w, err := table.Open(ctx, cat, benchTable)
	if err != nil {
		return err
	}
	if req.Parts > 0 {
		var all []orderdata.Order
		for p := range req.Parts {
			all = append(all, orderdata.Day(day.AddDate(0, 0, -p), 100)...)
		}
		rdr := orderdata.Reader(all, 8192)
		defer rdr.Release()
		if _, err := w.ReplacePartitions(ctx, rdr); err != nil {
			return err
		}
	}
	if req.DayRows > 0 {
		key, err := w.Key("event_date=" + day.Format(time.DateOnly))
		if err != nil {
			return err
		}
		rdr := orderdata.Stream(day, req.DayRows, 65536)
		defer rdr.Release()
		if _, err := w.ReplacePartition(ctx, key, rdr); err != nil {
			return err
		}
	}
	if req.MORUpserts > 0 {
		mw, err := table.Open(ctx, cat, benchTable, table.WithWriteMode(table.MergeOnRead))
		if err != nil {
			return err
		}
		return morUpserts(ctx, mw, req.DayRows, req.MORUpserts, req.Engine == "spark-scan-compacted")
	}
	return nil
}

// runGo times one Go engine's step of req, from opening the input to the
// end of the commit.
func runGo(ctx context.Context, req request) (outcome, error) {
	var out outcome
	if req.Engine == "pqarrow" {
		start, cpu0 := time.Now(), cpuSeconds()
		rdr, err := readParquet(ctx, req.Input, 65536)
		if err != nil {
			return out, err
		}
		defer rdr.Release()
		if err := writeParquet(req.Output, rdr); err != nil {
			return out, err
		}
		out.Wall, out.CPU = time.Since(start).Seconds(), cpuSeconds()-cpu0
		return out, nil
	}
	cat, err := internal.OpenSQLite(ctx, req.Dir)
	if err != nil {
		return out, err
	}
	var opts []table.Option
	if req.Engine == "icerun-mor" {
		opts = append(opts, table.WithWriteMode(table.MergeOnRead))
	}
	w, err := table.Open(ctx, cat, benchTable, opts...)
	if err != nil {
		return out, err
	}
	stop, err := startProfile()
	if err != nil {
		return out, err
	}
	defer stop()
	defer startHeapProfile()()
	start, cpu0 := time.Now(), cpuSeconds()
	switch req.Scenario {
	case "backfill":
		out.First10, out.Last10, err = backfillGo(ctx, req, w)
	case "compact":
		err = compactGo(ctx, w)
	default:
		var rdr array.RecordReader
		if req.Engine == "icerun" || req.Engine == "icerun-mor" { // icerun's own reader: pages through a buffer, not whole column chunks
			rdr, err = parquetfile.Open(ctx, []string{req.Input})
		} else {
			rdr, err = readParquet(ctx, req.Input, 8192)
		}
		if err != nil {
			return out, err
		}
		defer rdr.Release()
		err = writeGo(ctx, req, w, rdr)
	}
	if err != nil {
		return out, err
	}
	out.Wall, out.CPU = time.Since(start).Seconds(), cpuSeconds()-cpu0
	return out, nil
}

// writeGo is one engine's write of rdr for scenario replace, dynamic or
// upsert.
func writeGo(ctx context.Context, req request, w *table.Writer, rdr array.RecordReader) error {
	switch req.Engine + "/" + req.Scenario {
	case "icerun/replace":
		key, err := w.Key("event_date=" + day.Format(time.DateOnly))
		if err != nil {
			return err
		}
		_, err = w.ReplacePartition(ctx, key, rdr)
		return err
	case "icerun/dynamic":
		_, err := w.ReplacePartitions(ctx, rdr)
		return err
	case "icerun/upsert", "icerun-mor/upsert": // copy-on-write, merge-on-read (the writer's mode)
		_, err := w.Upsert(ctx, rdr, "order_id")
		return err
	case "raw/replace":
		return rawOverwrite(ctx, w.Table(), rdr)
	case "raw/dynamic":
		// The input's 30 days, by a range filter on the partition column.
		first := day.AddDate(0, 0, -29)
		filter := iceberg.NewAnd(
			iceberg.GreaterThanEqual(iceberg.Reference("event_date"), iceberg.Date(arrow.Date32FromTime(first))),
			iceberg.LessThanEqual(iceberg.Reference("event_date"), iceberg.Date(arrow.Date32FromTime(day))))
		_, err := rawCommit(ctx, w.Table(), rdr, filter)
		return err
	}
	return fmt.Errorf("no %s run of scenario %s", req.Engine, req.Scenario)
}

// backfillGo replaces every day of the input, one commit per day: icerun
// with backfill.Run (2 workers, snapshots expired during the run), raw
// iceberg-go with a loop of filtered overwrites. It returns the seconds
// of the first and the last 10 commits (laps between completions), and
// writes every lap as a JSON array into $ICERUN_BENCH_LAPS when set.
func backfillGo(ctx context.Context, req request, w *table.Writer) (first10, last10 float64, err error) {
	rdr, err := readParquet(ctx, req.Input, 65536)
	if err != nil {
		return 0, 0, err
	}
	var recs []arrow.RecordBatch
	for rdr.Next() {
		r := rdr.RecordBatch()
		r.Retain()
		recs = append(recs, r)
	}
	rdr.Release()
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if len(recs) == 0 {
		return 0, 0, fmt.Errorf("backfill: empty input %s", req.Input)
	}
	col := recs[0].Schema().FieldIndices("event_date")[0]
	first := arrow.Date32(recs[0].Column(col).(*array.Date32).Value(0)).ToTime()
	days := int(day.Sub(first).Hours()/24) + 1
	sc := recs[0].Schema()
	reader := func(d time.Time) (array.RecordReader, error) {
		return array.NewRecordReader(sc, dayRows(recs, d, col))
	}
	var (
		mu   sync.Mutex
		laps []float64
		last = time.Now()
	)
	lap := func() {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		laps = append(laps, now.Sub(last).Seconds())
		last = now
	}
	switch req.Engine {
	case "icerun":
		keys := make([]partition.Key, days)
		for i := range keys {
			if keys[i], err = w.Key("event_date=" + first.AddDate(0, 0, i).Format(time.DateOnly)); err != nil {
				return 0, 0, err
			}
		}
		job := func(ctx context.Context, key partition.Key) (array.RecordReader, error) {
			d, err := time.Parse(time.DateOnly, key.String()[len("event_date="):])
			if err != nil {
				return nil, err
			}
			return reader(d)
		}
		_, err = backfill.Run(ctx, w, keys, job, backfill.WithWorkers(2),
			backfill.WithHygiene(backfill.Hygiene{KeepSnapshots: 8}),
			backfill.WithProgress(func(backfill.Progress) { lap() }))
	case "raw":
		tbl := w.Table()
		for i := range days {
			d := first.AddDate(0, 0, i)
			var rdr array.RecordReader
			if rdr, err = reader(d); err != nil {
				return 0, 0, err
			}
			filter := iceberg.EqualTo(iceberg.Reference("event_date"), iceberg.Date(arrow.Date32FromTime(d)))
			tbl, err = rawCommit(ctx, tbl, rdr, filter)
			rdr.Release()
			if err != nil {
				return 0, 0, err
			}
			lap()
		}
	default:
		err = fmt.Errorf("no %s run of scenario backfill", req.Engine)
	}
	if err != nil {
		return 0, 0, err
	}
	if f := os.Getenv("ICERUN_BENCH_LAPS"); f != "" { // every lap, to see how commits age
		b, _ := json.Marshal(laps)
		if err := os.WriteFile(f, b, 0o644); err != nil {
			return 0, 0, err
		}
	}
	if len(laps) < 20 {
		return 0, 0, fmt.Errorf("backfill: %d commits, want at least 20", len(laps))
	}
	for _, l := range laps[:10] {
		first10 += l
	}
	for _, l := range laps[len(laps)-10:] {
		last10 += l
	}
	return first10, last10, nil
}

// child runs one -prepare or -run step given as JSON and prints its
// outcome as JSON.
func stepChild(ctx context.Context, spec string, prep bool) error {
	var req request
	if err := json.Unmarshal([]byte(spec), &req); err != nil {
		return err
	}
	if prep {
		return prepare(ctx, req)
	}
	out, err := runGo(ctx, req)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
