package sink_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

var httpSource = sink.SourcePartition{Source: "http:events", Partition: 0}

func mustIngester(t *testing.T, dir string, opts ...sink.Option) *sink.Ingester {
	t.Helper()
	in, err := sink.OpenIngester(context.Background(), catalogtest.Open(t, dir), flatIdent, httpSource, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

var flatIdent = []string{catalogtest.Namespace, "events"}

// Many goroutines write through one ingester, each record sent twice (a
// client retry): every Write returns only once its rows are in the table
// (read before Close), every id is there once, and the commits are
// grouped (fewer commits than records), and their small files compacted
// as they go.
func TestIngesterConcurrentWritersCommitBeforeReturn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	flatEventsTable(t, cat, "events")
	in := mustIngester(t, dir, sink.WithKey("id"), sink.WithCommitInterval(20*time.Millisecond), sink.WithSmallFileCompaction(4, 0))
	const writers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each*2)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				for range 2 { // the second is a retry: dropped as a duplicate
					rec := batch([]msg{{id, int64(i), day0}})
					err := in.Write(ctx, rec)
					rec.Release()
					if err != nil {
						errs <- err
						return
					}
					// Acknowledged: the row is in the table now.
					if got := ids(t, catalogtest.Open(t, dir), flatIdent); !slices.Contains(got, id) {
						errs <- fmt.Errorf("write of %s returned before its commit (table has %d rows)", id, len(got))
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var want []string
	for w := range writers {
		for i := range each {
			want = append(want, fmt.Sprintf("w%d-%d", w, i))
		}
	}
	slices.Sort(want)
	if got := ids(t, cat, flatIdent); !slices.Equal(got, want) {
		t.Errorf("table holds %d ids, want %d, each once", len(got), len(want))
	}
	st := in.Stats()
	if st.Commits >= writers*each*2 || st.Duplicates != writers*each {
		t.Errorf("stats = %+v; want fewer than %d commits and %d duplicates", st, writers*each*2, writers*each)
	}
	if n := liveDataFiles(t, cat, flatIdent); n > 4 || st.Compactions == 0 {
		t.Errorf("%d data files after %d compactions, want at most 4 after one or more", n, st.Compactions)
	}
	if err := in.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rec := batch([]msg{{"late", 0, day0}})
	defer rec.Release()
	if err := in.Write(ctx, rec); !errors.Is(err, sink.ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
}

// A commit that fails fails every caller of it with the commit's error;
// their retries then commit (the ingester starts again from the table),
// each row once.
func TestIngesterFailedCommitFailsEveryCaller(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	flatEventsTable(t, cat, "events")
	const callers = 4
	in := mustIngester(t, dir, sink.WithKey("id"), sink.WithCommitRows(callers), sink.WithCommitInterval(time.Hour))
	defer in.Close(ctx)
	// Another writer takes the ingester's source partition: the
	// ingester's next commit is fenced.
	other := mustOpen(t, catalogtest.Open(t, dir), flatIdent, sink.WithKey("id"))
	rec := batch([]msg{{"other", 0, day0}})
	if err := other.Write(ctx, httpSource, []int64{100}, rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	mustCommit(t, other)

	send := func() []error {
		out := make([]error, callers)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				rec := batch([]msg{{fmt.Sprintf("c%d", i), int64(i), day0}})
				defer rec.Release()
				out[i] = in.Write(ctx, rec)
			})
		}
		wg.Wait()
		return out
	}
	for i, err := range send() {
		if !errors.Is(err, sink.ErrFenced) {
			t.Errorf("caller %d of the fenced commit: %v, want ErrFenced", i, err)
		}
	}
	for i, err := range send() {
		if err != nil {
			t.Errorf("caller %d retrying: %v", i, err)
		}
	}
	if got, w := ids(t, cat, flatIdent), []string{"c0", "c1", "c2", "c3", "other"}; !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
}

// A caller whose context ends returns at once with its error, and leaves
// the batch whole: its rows, already written, commit with the others at
// Close, and the other callers are answered.
func TestIngesterCanceledCallerReturnsEarly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	flatEventsTable(t, cat, "events")
	in := mustIngester(t, dir, sink.WithKey("id"), sink.WithCommitInterval(time.Hour))
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	rec := batch([]msg{{"gone", 0, day0}})
	start := time.Now()
	err := in.Write(short, rec)
	rec.Release()
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Fatalf("Write with an ended context = %v after %s, want DeadlineExceeded at once", err, time.Since(start))
	}
	done := make(chan error, 1)
	go func() {
		rec := batch([]msg{{"kept", 1, day0}})
		defer rec.Release()
		done <- in.Write(ctx, rec)
	}()
	time.Sleep(50 * time.Millisecond) // let it reach the batch
	if err := in.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("caller answered by Close's commit: %v", err)
	}
	if got, w := ids(t, cat, flatIdent), []string{"gone", "kept"}; !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
}

// An ingester needs keyed mode: without it a retry is a second row.
func TestIngesterRequiresKey(t *testing.T) {
	t.Parallel()
	cat, dir := catalogtest.New(t)
	flatEventsTable(t, cat, "events")
	_, err := sink.OpenIngester(context.Background(), catalogtest.Open(t, dir), flatIdent, httpSource)
	if !errors.Is(err, sink.ErrBadOption) {
		t.Errorf("OpenIngester without WithKey = %v, want ErrBadOption", err)
	}
}

// Close flushes and ends every goroutine the ingester started: the owner
// and the sink's file writers.
func TestIngesterCloseEndsItsGoroutines(t *testing.T) {
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	flatEventsTable(t, cat, "events")
	c := catalogtest.Open(t, dir)
	if _, err := c.LoadTable(ctx, flatIdent); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	in, err := sink.OpenIngester(ctx, c, flatIdent, httpSource, sink.WithKey("id"), sink.WithCommitInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	rec := batch([]msg{{"a", 0, day0}})
	defer rec.Release()
	done := make(chan error, 1)
	go func() { done <- in.Write(ctx, rec) }()
	// Close only once the record is handed over: Write waits for its
	// commit (a Write that starts after Close fails with ErrClosed).
	waitBlockedInWrite(t)
	if err := in.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before OpenIngester", n, before)
	}
	if got := ids(t, cat, flatIdent); !slices.Equal(got, []string{"a"}) {
		t.Errorf("table ids = %v, want [a]", got)
	}
}

// waitBlockedInWrite waits until a goroutine waits inside
// (*Ingester).Write for its commit: past the hand-over (the request
// channel is buffered, so the select that hands over never blocks here).
func waitBlockedInWrite(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(time.Millisecond) {
		stacks := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, "[select") && strings.Contains(g, "sink.(*Ingester).Write") {
				return
			}
		}
	}
	t.Fatal("no Write waits for its commit after 10s")
}
