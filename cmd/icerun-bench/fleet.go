package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/sink"
)

// fleetConfig is the scale of the -fleet bench: N in-process members (one
// source partition each) hand their rows over every interval to one
// committer on the embedded SQLite catalog.
type fleetConfig struct {
	members  []int
	interval time.Duration
	duration time.Duration
	rows     int // per member per interval
}

// fleetTrial is what one run measured.
type fleetTrial struct {
	members          int
	commits          int64
	failed           int64
	commitsPerSecond float64
	p50, p99, max    time.Duration // write-to-visible
	snapshots        int
	metadataBytes    int64
	rows             int64
	exact            bool
}

// runFleet runs the -fleet bench and prints its table.
func runFleet(cfg fleetConfig) error {
	var out []fleetTrial
	for _, n := range cfg.members {
		tr, err := fleetTrialRun(cfg, n)
		if err != nil {
			return fmt.Errorf("fleet of %d: %w", n, err)
		}
		out = append(out, tr)
		fmt.Fprintf(os.Stderr, "fleet of %d members: %+v\n", n, tr)
	}
	fmt.Printf("one committer, %s interval, %d rows per member per interval, %s per run, embedded SQLite catalog\n", cfg.interval, cfg.rows, cfg.duration)
	fmt.Printf("| members | commits/s on the table | failed commits | write-to-visible p50 / p99 / max | snapshots | metadata.json | rows exactly once |\n|---|---|---|---|---|---|---|\n")
	for _, t := range out {
		fmt.Printf("| %d | %.2f | %d | %.2f / %.2f / %.2f s | %d | %d KB | %v (%d) |\n", t.members, t.commitsPerSecond, t.failed,
			t.p50.Seconds(), t.p99.Seconds(), t.max.Seconds(), t.snapshots, t.metadataBytes/1024, t.exact, t.rows)
	}
	return nil
}

// fleetTrialRun runs n members and one committer for cfg.duration.
func fleetTrialRun(cfg fleetConfig, n int) (fleetTrial, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "icerun-fleet-")
	if err != nil {
		return fleetTrial{}, err
	}
	defer os.RemoveAll(dir)
	cat, err := catalogconfig.OpenLocal(ctx, filepath.Join(dir, "warehouse"))
	if err != nil {
		return fleetTrial{}, err
	}
	ident := icetable.Identifier{"db", "events"}
	if err := cat.CreateNamespace(ctx, icetable.Identifier{"db"}, nil); err != nil {
		return fleetTrial{}, err
	}
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "seq", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	)
	if _, err := cat.CreateTable(ctx, ident, sch); err != nil {
		return fleetTrial{}, err
	}
	com, err := sink.OpenCommitter(ctx, cat, ident)
	if err != nil {
		return fleetTrial{}, err
	}
	defer com.Close(ctx)

	type sent struct {
		b       []byte
		written time.Time
	}
	control := make(chan sent, 4*n)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, n+1)
	for i := range n {
		m, err := sink.Open(ctx, cat, ident, sink.WithHandOver(fmt.Sprintf("m%d", i)))
		if err != nil {
			return fleetTrial{}, err
		}
		wg.Go(func() {
			defer m.Abort(ctx)
			sp := sink.SourcePartition{Source: "bench", Partition: int32(i)}
			tick := time.NewTicker(cfg.interval)
			defer tick.Stop()
			var off int64
			time.Sleep(time.Duration(i) * cfg.interval / time.Duration(n)) // members are not in step
			for {
				written := time.Now()
				rec, offs := fleetBatch(int32(i), off, cfg.rows)
				off += int64(cfg.rows)
				err := m.Write(ctx, sp, offs, rec)
				rec.Release()
				if err != nil {
					errs <- err
					return
				}
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				h, err := m.HandOver(ctx, 1)
				if err != nil {
					errs <- err
					return
				}
				b, err := h.Marshal(m.Table())
				if err != nil {
					errs <- err
					return
				}
				control <- sent{b, written}
			}
		})
	}
	var (
		tr      = fleetTrial{members: n}
		visible []time.Duration
		written = map[string]time.Time{}
	)
	begin := time.Now()
	tick := time.NewTicker(cfg.interval)
	for time.Since(begin) < cfg.duration {
		<-tick.C
	drain:
		for {
			select {
			case s := <-control:
				h, err := sink.UnmarshalHandOver(s.b)
				if err != nil {
					return tr, err
				}
				written[h.ID] = s.written
				if err := com.Add(h); err != nil {
					return tr, err
				}
			case err := <-errs:
				return tr, err
			default:
				break drain
			}
		}
		l, err := com.Commit(ctx)
		if err != nil {
			tr.failed++
			continue
		}
		now := time.Now()
		for _, h := range l.Landed {
			visible = append(visible, now.Sub(written[h.ID]))
			delete(written, h.ID)
		}
	}
	tick.Stop()
	elapsed := time.Since(begin)
	close(stop)
	go func() {
		for range control { // members blocked on a full channel
		}
	}()
	wg.Wait()
	close(control)
	st := com.Stats()
	tr.commits = st.Commits
	tr.commitsPerSecond = float64(st.Commits) / elapsed.Seconds()
	slices.Sort(visible)
	if len(visible) > 0 {
		tr.p50, tr.p99, tr.max = visible[len(visible)/2], visible[len(visible)*99/100], visible[len(visible)-1]
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return tr, err
	}
	tr.snapshots = len(tbl.Metadata().Snapshots())
	if fi, err := os.Stat(tbl.MetadataLocation()); err == nil {
		tr.metadataBytes = fi.Size()
	}
	tr.rows, tr.exact, err = fleetExact(ctx, cat, ident)
	return tr, err
}

// fleetBatch is rows messages of partition part from offset from.
func fleetBatch(part int32, from int64, rows int) (arrow.RecordBatch, []int64) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}, {Name: "seq", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	offs := make([]int64, rows)
	for i := range rows {
		o := from + int64(i)
		b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("p%d-%d", part, o))
		b.Field(1).(*array.Int64Builder).Append(o)
		offs[i] = o
	}
	return b.NewRecordBatch(), offs
}

// fleetExact reads every row and reports whether each source partition
// holds exactly the offsets 0 through its position, each once.
func fleetExact(ctx context.Context, cat catalog.Catalog, ident icetable.Identifier) (int64, bool, error) {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return 0, false, err
	}
	pos, err := sink.Positions(tbl)
	if err != nil {
		return 0, false, err
	}
	_, recs, err := tbl.Scan(icetable.WithSelectedFields("id")).ToArrowRecords(ctx)
	if err != nil {
		return 0, false, err
	}
	seen := map[string]int{}
	var rows int64
	for rec, err := range recs {
		if err != nil {
			return rows, false, err
		}
		col := rec.Column(0).(*array.String)
		for i := range col.Len() {
			seen[col.Value(i)]++
			rows++
		}
		rec.Release()
	}
	var want int64
	for sp, end := range pos {
		for o := int64(0); o <= end; o++ {
			if seen[fmt.Sprintf("p%d-%d", sp.Partition, o)] != 1 {
				return rows, false, nil
			}
		}
		want += end + 1
	}
	return rows, want == rows, nil
}
