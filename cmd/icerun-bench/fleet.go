package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/sink"
)

// fleetConfig is the scale of the -fleet bench: N in-process sinks (one
// source partition each) on the embedded SQLite catalog, in each of
// modes: the fleet (the sinks hand their rows over every interval to one
// committer), or the baseline (each sink commits its own snapshot every
// interval, optimistically or under the commit lock).
type fleetConfig struct {
	members  []int
	modes    []fleetMode
	interval time.Duration
	duration time.Duration
	rows     int // per member per interval
}

// fleetMode is how the N sinks of a -fleet trial reach the table.
type fleetMode string

const (
	fleetHandOver fleetMode = "fleet"    // members hand over to one committer
	fleetOwn      fleetMode = "own"      // each sink commits on its own, optimistic
	fleetOwnLock  fleetMode = "own-lock" // each sink commits on its own, under commit.FileLock
)

// parseFleetModes parses -fleet-modes.
func parseFleetModes(s string) ([]fleetMode, error) {
	var out []fleetMode
	for _, f := range strings.Split(s, ",") {
		m := fleetMode(strings.TrimSpace(f))
		switch m {
		case fleetHandOver, fleetOwn, fleetOwnLock:
			out = append(out, m)
		default:
			return nil, fmt.Errorf("-fleet-modes: %q is not fleet, own or own-lock", f)
		}
	}
	return out, nil
}

// fleetTrial is what one run measured.
type fleetTrial struct {
	mode             fleetMode
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
	stop, err := startProfile() // ICERUN_BENCH_CPUPROFILE
	if err != nil {
		return err
	}
	defer stop()
	var out []fleetTrial
	for _, n := range cfg.members {
		for _, mode := range cfg.modes {
			tr, err := fleetTrialRun(cfg, mode, n)
			if err != nil {
				return fmt.Errorf("%s of %d: %w", mode, n, err)
			}
			out = append(out, tr)
			fmt.Fprintf(os.Stderr, "%s, %d sinks: %+v\n", mode, n, tr)
		}
	}
	fmt.Printf("%s interval, %d rows per sink per interval, %s per run, embedded SQLite catalog; "+
		"fleet: members hand over to one committer; own: each sink commits on its own (own-lock: under commit.FileLock)\n", cfg.interval, cfg.rows, cfg.duration)
	fmt.Printf("| sinks | mode | commits/s on the table (offered) | failed commits | write-to-visible p50 / p99 / max | snapshots | metadata.json | rows exactly once |\n|---|---|---|---|---|---|---|---|\n")
	for _, t := range out {
		offered := float64(t.members) / cfg.interval.Seconds()
		if t.mode == fleetHandOver {
			offered = 1 / cfg.interval.Seconds()
		}
		fmt.Printf("| %d | %s | %.2f (%.0f) | %d | %.2f / %.2f / %.2f s | %d | %d KB | %v (%d) |\n", t.members, t.mode, t.commitsPerSecond, offered, t.failed,
			t.p50.Seconds(), t.p99.Seconds(), t.max.Seconds(), t.snapshots, t.metadataBytes/1024, t.exact, t.rows)
	}
	return nil
}

// fleetTrialRun runs n sinks in mode for cfg.duration on a new table.
func fleetTrialRun(cfg fleetConfig, mode fleetMode, n int) (fleetTrial, error) {
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
	var tr fleetTrial
	switch mode {
	case fleetHandOver:
		tr, err = fleetHandOverRun(ctx, cfg, cat, ident, n)
	default:
		var opts []sink.Option
		if mode == fleetOwnLock {
			opts = append(opts, sink.WithCommitLock(commit.FileLock(filepath.Join(dir, "locks"))))
		}
		tr, err = fleetOwnRun(ctx, cfg, cat, ident, n, opts)
	}
	tr.mode, tr.members = mode, n
	if err != nil {
		return tr, err
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return tr, err
	}
	tr.snapshots = len(tbl.Metadata().Snapshots())
	if fi, err := os.Stat(strings.TrimPrefix(tbl.MetadataLocation(), "file://")); err == nil {
		tr.metadataBytes = fi.Size()
	}
	tr.rows, tr.exact, err = fleetExact(ctx, cat, ident)
	return tr, err
}

// fleetOwnRun is the baseline: n sinks, each writing its source partition
// and committing its own snapshot every interval, for cfg.duration. A
// failed commit drops its batch; the sink resumes from the table's
// position, as `icerun sink` does.
func fleetOwnRun(ctx context.Context, cfg fleetConfig, cat catalog.Catalog, ident icetable.Identifier, n int, opts []sink.Option) (fleetTrial, error) {
	var (
		mu      sync.Mutex
		tr      fleetTrial
		visible []time.Duration
		wg      sync.WaitGroup
	)
	errs := make(chan error, n)
	begin := time.Now()
	end := begin.Add(cfg.duration)
	for i := range n {
		s, err := sink.Open(ctx, cat, ident, opts...)
		if err != nil {
			return tr, err
		}
		wg.Go(func() {
			defer s.Close(ctx)
			sp := sink.SourcePartition{Source: "bench", Partition: int32(i)}
			time.Sleep(time.Duration(i) * cfg.interval / time.Duration(n)) // sinks are not in step
			tick := time.NewTicker(cfg.interval)
			defer tick.Stop()
			var off int64
			for time.Now().Before(end) {
				written := time.Now()
				rec, offs := fleetBatch(int32(i), off, cfg.rows)
				err := s.Write(ctx, sp, offs, rec)
				rec.Release()
				if err != nil {
					errs <- err
					return
				}
				<-tick.C
				_, err = s.Commit(ctx)
				now := time.Now()
				mu.Lock()
				if err != nil {
					tr.failed++
				} else {
					off += int64(cfg.rows)
					if now.Before(end) {
						tr.commits++
					}
					visible = append(visible, now.Sub(written))
				}
				mu.Unlock()
				if err != nil {
					pos, err := s.Start(ctx, sp)
					if err != nil {
						errs <- err
						return
					}
					if p, ok := pos[sp]; ok {
						off = p + 1
					} else {
						off = 0
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return tr, err
	}
	tr.commitsPerSecond = float64(tr.commits) / cfg.duration.Seconds()
	tr.p50, tr.p99, tr.max = percentiles(visible)
	return tr, nil
}

// percentiles is the p50, p99 and max of ds (sorted in place).
func percentiles(ds []time.Duration) (p50, p99, maxd time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2], ds[len(ds)*99/100], ds[len(ds)-1]
}

// fleetHandOverRun runs n members and one committer for cfg.duration.
func fleetHandOverRun(ctx context.Context, cfg fleetConfig, cat catalog.Catalog, ident icetable.Identifier, n int) (fleetTrial, error) {
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
			time.Sleep(time.Duration(i) * cfg.interval / time.Duration(n)) // members are not in step, nor in step with the committer
			tick := time.NewTicker(cfg.interval)
			defer tick.Stop()
			var off int64
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
		tr      fleetTrial
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
	tr.p50, tr.p99, tr.max = percentiles(visible)
	return tr, nil
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
