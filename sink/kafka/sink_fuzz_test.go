package kafka

import (
	"context"
	"errors"
	"testing"

	icetable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// FuzzJSONIntoTable: whatever a message holds, the Kafka adapter either
// commits it as a row or puts it in the dead-letter table; the commit
// never fails and nothing panics (a message that stops or crashes the sink
// on every restart is a poison pill).
func FuzzJSONIntoTable(f *testing.F) {
	ctx := context.Background()
	cat, _ := catalogtest.New(f)
	ident := valuesTable(f, cat, "fuzz")
	c := openConsumer(f, cat, ident, "fuzz", sink.WithDeadLetter(icetable.Identifier{"db", "fuzz_dead"}))
	s := c.s
	if _, err := s.Start(ctx); err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{"id": "a", "amount": 1.25, "ts": "2026-07-14T12:00:00Z", "day": "2026-07-14"}`,
		`{"id": "b", "ts": 1, "who": {"name": "x", "tags": ["a", null]}}`,
		`{"id": "c", "ts": 9000000000000000000, "day": 2000000000}`,
		`{"id": "d", "ts": -9000000000000000000, "amount": -9999999.99}`,
		`{"id": "e", "ts": "0001-01-01T00:00:00Z", "who": {}}`,
	} {
		f.Add([]byte(seed))
	}
	offset := int64(0)
	f.Fuzz(func(t *testing.T, value []byte) {
		offset++
		if err := c.write(ctx, c.cfg.Topic, 0, []*kgo.Record{{Offset: offset, Value: value}}); err != nil {
			t.Fatalf("write %q: %v", value, err)
		}
		if _, err := s.Commit(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("commit after %q: %v", value, err)
		}
	})
}
