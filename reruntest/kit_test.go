package reruntest_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/reruntest"
	"github.com/icerun/icerun/table"
)

var (
	day0   = time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	raw    = icetable.Identifier{"shop", "orders"}
	rollup = icetable.Identifier{"shop", "daily_revenue"}
	batch  = append(orderdata.Day(day0, 6), orderdata.Day(day0.AddDate(0, 0, 1), 4)...)
)

var revenueSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "event_date", Type: iceberg.PrimitiveTypes.Date, Required: true},
	iceberg.NestedField{ID: 2, Name: "revenue_minor", Type: iceberg.PrimitiveTypes.Int64, Required: true},
)

func setup(ctx context.Context, cat catalog.Catalog) error {
	if err := orderdata.CreateTable(ctx, cat, raw); err != nil {
		return err
	}
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "event_date", Transform: iceberg.IdentityTransform{}})
	_, err := cat.CreateTable(ctx, rollup, revenueSchema, catalog.WithPartitionSpec(&spec))
	return err
}

var tables = []reruntest.Table{{Ident: raw, Key: []string{"order_id"}}, {Ident: rollup, Key: []string{"event_date"}}}

// revenue is one rollup row.
func revenue(day arrow.Date32, total int64) array.RecordReader {
	sc := arrow.NewSchema([]arrow.Field{{Name: "event_date", Type: arrow.FixedWidthTypes.Date32}, {Name: "revenue_minor", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Date32Builder).Append(day)
	b.Field(1).(*array.Int64Builder).Append(total)
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, _ := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	return rdr
}

func sumAmounts(src array.RecordReader) (int64, error) {
	var sum int64
	for src.Next() {
		rec := src.RecordBatch()
		a := rec.Column(rec.Schema().FieldIndices("amount_minor")[0]).(*array.Int64)
		for i := 0; i < a.Len(); i++ {
			sum += a.Value(i)
		}
	}
	return sum, src.Err()
}

func dayOf(k string) arrow.Date32 {
	d, _ := time.Parse(time.DateOnly, strings.TrimPrefix(k, "event_date="))
	return arrow.Date32FromTime(d)
}

// idempotent upserts the batch into the raw table by order_id, then
// recomputes the revenue of every day it touched from the raw table.
func idempotent(ctx context.Context, cat catalog.Catalog) error {
	w, err := table.Open(ctx, cat, raw, table.WithCodeVersion("v1"))
	if err != nil {
		return err
	}
	rows := orderdata.Reader(batch, 4)
	defer rows.Release()
	res, err := w.Upsert(ctx, rows, "order_id")
	if err != nil {
		return err
	}
	src, err := cat.LoadTable(ctx, raw)
	if err != nil {
		return err
	}
	agg, err := table.Open(ctx, cat, rollup, table.WithCodeVersion("v1"))
	if err != nil {
		return err
	}
	for _, p := range res.Partitions {
		sk, err := partition.ParseKey(src.Spec(), src.Schema(), p)
		if err != nil {
			return err
		}
		dk, err := agg.Key(p)
		if err != nil {
			return err
		}
		_, err = agg.Recompute(ctx, dk, table.Source{Table: src, Key: sk, SnapshotID: res.SnapshotID},
			func(_ context.Context, rows array.RecordReader) (array.RecordReader, error) {
				sum, err := sumAmounts(rows)
				return revenue(dayOf(p), sum), err
			})
		if err != nil {
			return err
		}
	}
	return nil
}

// appending appends the batch to the raw table: every run adds a copy.
func appending(ctx context.Context, cat catalog.Catalog) error {
	tbl, err := cat.LoadTable(ctx, raw)
	if err != nil {
		return err
	}
	rdr := orderdata.Reader(batch, 4)
	defer rdr.Release()
	txn := tbl.NewTransaction()
	if err := txn.Append(ctx, rdr, nil); err != nil {
		return err
	}
	_, err = txn.Commit(ctx)
	return err
}

// incrementing upserts the raw rows (idempotent), but adds the batch's
// revenue to the previous total instead of recomputing it.
func incrementing(ctx context.Context, cat catalog.Catalog) error {
	w, err := table.Open(ctx, cat, raw)
	if err != nil {
		return err
	}
	rows := orderdata.Reader(batch, 4)
	defer rows.Release()
	if _, err := w.Upsert(ctx, rows, "order_id"); err != nil {
		return err
	}
	agg, err := table.Open(ctx, cat, rollup)
	if err != nil {
		return err
	}
	totals := map[string]int64{}
	for _, o := range batch {
		totals["event_date="+o.EventTime.Format(time.DateOnly)] += o.Amount
	}
	for p, add := range totals {
		prev, err := previousTotal(ctx, cat, dayOf(p))
		if err != nil {
			return err
		}
		k, err := agg.Key(p)
		if err != nil {
			return err
		}
		if _, err := agg.ReplacePartition(ctx, k, revenue(dayOf(p), prev+add)); err != nil {
			return err
		}
	}
	return nil
}

func previousTotal(ctx context.Context, cat catalog.Catalog, day arrow.Date32) (int64, error) {
	tbl, err := cat.LoadTable(ctx, rollup)
	if err != nil || tbl.CurrentSnapshot() == nil {
		return 0, err
	}
	_, batches, err := tbl.Scan(icetable.WithRowFilter(iceberg.EqualTo(iceberg.Reference("event_date"), iceberg.Date(day)))).ToArrowRecords(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	for rec, err := range batches {
		if err != nil {
			return 0, err
		}
		a := rec.Column(1).(*array.Int64)
		for i := 0; i < a.Len(); i++ {
			total += a.Value(i)
		}
		rec.Release()
	}
	return total, nil
}

// recorder is a testing.TB that records failures instead of failing the
// test, so that a test can check that the kit fails.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *recorder) Error(args ...any)                 { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any)                 { r.Error(args...); runtime.Goexit() }
func (r *recorder) FailNow()                          { r.Errorf("FailNow"); runtime.Goexit() }
func (r *recorder) Fail()                             { r.Errorf("Fail") }
func (r *recorder) Failed() bool                      { r.mu.Lock(); defer r.mu.Unlock(); return len(r.msgs) > 0 }
func (r *recorder) Logf(string, ...any)               {}

// checkWith runs reruntest.Check with a recorder and returns what it
// reported.
func checkWith(t *testing.T, cfg reruntest.Config) []string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		reruntest.Check(r, cfg)
	}()
	<-done
	return r.msgs
}

func TestKitPassesIdempotentPipeline(t *testing.T) {
	cfg := reruntest.Config{Setup: setup, Run: idempotent, Tables: tables}
	if testing.Short() { // every fault, at the first three operations of each
		cfg.Ks = []int{0, 1, 2}
	}
	msgs := checkWith(t, cfg)
	if len(msgs) > 0 {
		t.Errorf("Check(upsert + recompute pipeline) reported %q, want nothing", msgs)
	}
}

func TestKitCatchesNonIdempotentPipelines(t *testing.T) {
	cases := []struct {
		name string
		run  func(context.Context, catalog.Catalog) error
		want string
	}{
		{"append", appending, "table shop.orders after the rerun differs from one clean run"},
		{"increment a total", incrementing, "table shop.daily_revenue after the rerun differs from one clean run"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := reruntest.Config{Setup: setup, Run: c.run, Tables: []reruntest.Table{{Ident: raw}, {Ident: rollup}}}
			if testing.Short() { // a failed first commit after a clean run is enough to duplicate
				cfg.Faults, cfg.Ks = []reruntest.Fault{reruntest.Commit}, []int{0}
			}
			msgs := checkWith(t, cfg)
			if len(msgs) == 0 || !strings.Contains(msgs[0], c.want) {
				t.Fatalf("Check(%s pipeline) reported %q, want a failure containing %q", c.name, msgs, c.want)
			}
			if !strings.Contains(msgs[0], "first") {
				t.Errorf("Check(%s pipeline) = %q, want the first differing row", c.name, msgs[0])
			}
		})
	}
}

func TestKitCatchesDuplicateKeys(t *testing.T) {
	msgs := checkWith(t, reruntest.Config{Setup: setup, Run: appending, Tables: []reruntest.Table{{Ident: raw, Key: []string{"order_id", "event_ts"}}}})
	// One clean append holds each order once: the duplicates appear only
	// after the rerun, and are reported as such.
	if len(msgs) == 0 || !strings.Contains(msgs[0], "two rows with key (order_id=") {
		t.Errorf("Check(appending pipeline, key order_id) reported %q, want two rows with one key", msgs)
	}
}

func TestKitRejectsIncompleteConfig(t *testing.T) {
	msgs := checkWith(t, reruntest.Config{Run: idempotent})
	if len(msgs) != 1 || !strings.Contains(msgs[0], "needs Setup, Run and Tables") {
		t.Errorf("Check(no Setup) reported %q, want the missing fields", msgs)
	}
}

func TestFaultsFire(t *testing.T) {
	// Every injected commit failure must reach the pipeline as ErrInjected
	// (a refused commit) or be absorbed by icerun's commit loop (a lost
	// response: the commit landed, the token is found).
	var (
		mu   sync.Mutex
		errs []error
	)
	run := func(ctx context.Context, cat catalog.Catalog) error {
		err := idempotent(ctx, cat)
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
		return err
	}
	msgs := checkWith(t, reruntest.Config{Setup: setup, Run: run, Tables: tables, Ks: []int{0, 1}, Faults: []reruntest.Fault{reruntest.Commit, reruntest.CommitLost}})
	if len(msgs) > 0 {
		t.Fatalf("Check reported %q, want nothing", msgs)
	}
	injected := 0
	for _, err := range errs {
		switch {
		case errors.Is(err, reruntest.ErrInjected):
			injected++
		case err != nil:
			t.Errorf("run error %v, want nil or ErrInjected", err)
		}
	}
	// A replay of this pipeline commits nothing (every partition is
	// Unchanged), so only the first-run scenarios reach a commit: K=0 (the
	// upsert) and K=1 (the first rollup) are refused, 2 failing runs.
	if injected != 2 {
		t.Errorf("runs failing with ErrInjected = %d of %d, want 2", injected, len(errs))
	}
}
