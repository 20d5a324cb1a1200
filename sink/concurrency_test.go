package sink_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// Sinks appending to one table at once, each with its own catalog
// connection and source partition, never fail each other: a lost race is
// planned again on the new state. The table ends with every row once and
// the positions of every source partition.
func TestConcurrentSinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	const sinks, commits, rows = 4, 6, 20
	var wg sync.WaitGroup
	errs := make(chan error, sinks)
	attempts := make([]int, sinks)
	for i := range sinks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sp := sink.SourcePartition{Source: "test:events", Partition: int32(i)}
			s, err := sink.Open(ctx, catalogtest.Open(t, dir), ident, sink.WithRetry(commit.Policy{Attempts: 100}))
			if err != nil {
				errs <- err
				return
			}
			for c := range commits {
				ms, offs := messages(sp.Partition, int64(c*rows), int64((c+1)*rows))
				rec := batch(ms)
				err := s.Write(ctx, sp, offs, rec)
				rec.Release()
				if err != nil {
					errs <- err
					return
				}
				res, err := s.Commit(ctx)
				if err != nil {
					errs <- fmt.Errorf("sink %d commit %d: %w", i, c, err)
					return
				}
				attempts[i] += res.Attempts
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var w []string
	for i := range sinks {
		w = append(w, want(int32(i), 0, commits*rows)...)
	}
	slices.Sort(w)
	if got := ids(t, cat, ident); !slices.Equal(got, w) {
		t.Errorf("table holds %d rows, want %d unique", len(got), len(w))
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	pos, err := sink.Positions(tbl)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sinks {
		if sp := (sink.SourcePartition{Source: "test:events", Partition: int32(i)}); pos[sp] != commits*rows-1 {
			t.Errorf("position of %s = %d, want %d", sp, pos[sp], commits*rows-1)
		}
	}
	total := 0
	for _, a := range attempts {
		total += a
	}
	t.Logf("%d commits took %d attempts", sinks*commits, total)
}
