package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand"
	"slices"
	"strconv"
	"testing"

	icetable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// Random messages of every shape (each field absent, null, or a value of
// any JSON type, extreme numbers, nested objects missing required fields)
// through the Kafka adapter into a partitioned table with a dead-letter
// table: no error, no panic, and every message is either a row or a dead
// letter, exactly once.
func TestAnyMessageIsARowOrADeadLetter(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := valuesTable(t, cat, "anyjson")
	dead := icetable.Identifier{"db", "anyjson_dead"}
	c := openConsumer(t, cat, ident, "anyjson", sink.WithDeadLetter(dead))
	s := c.s
	if _, err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(7))
	messages, poll := 2000, 50
	if testing.Short() {
		messages = 400 // 8 polls and commits, not 40
	}
	for off := 0; off < messages; off += poll {
		recs := make([]*kgo.Record, poll)
		for i := range recs {
			recs[i] = &kgo.Record{Offset: int64(off + i), Value: randomMessage(rng, off+i)}
		}
		if err := c.write(ctx, c.cfg.Topic, 0, recs); err != nil {
			t.Fatalf("poll at %d: %v", off, err)
		}
		if _, err := s.Commit(ctx); err != nil {
			t.Fatalf("commit at %d: %v", off, err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ids := column(t, s.Table(), "id")
	dl, err := cat.LoadTable(ctx, dead)
	if err != nil {
		t.Fatal(err)
	}
	offsets := column(t, dl, sink.LateOffset)
	seen := map[string]int{}
	for _, id := range ids {
		seen[id]++
	}
	for _, o := range offsets {
		seen["m"+o]++
	}
	for i := range messages {
		if n := seen["m"+strconv.Itoa(i)]; n != 1 {
			t.Errorf("message %d: %d times in the table and the dead letters, want 1", i, n)
		}
	}
	t.Logf("%d messages: %d rows, %d dead letters", messages, len(ids), len(offsets))
	if len(ids) < messages/10 || len(offsets) < messages/10 {
		t.Errorf("the generator should make both rows and dead letters: %d rows, %d dead letters", len(ids), len(offsets))
	}
}

// randomMessage is a JSON object whose id is "m<i>" (so rows and dead
// letters can be told apart by it), its other fields random.
func randomMessage(rng *rand.Rand, i int) []byte {
	if rng.Intn(40) == 0 {
		return []byte([]string{`[]`, `null`, `{`, `{"id": 1}`, ``, `"m"`}[rng.Intn(6)])
	}
	obj := map[string]any{"id": "m" + strconv.Itoa(i), "ts": "2026-07-14T12:00:00Z"}
	fields := map[string]func() any{
		"amount": func() any { return pick(rng, 1.25, -9999999.99, 12345678901.23, "x", 1e300, nil) },
		"ts": func() any {
			return pick(rng, "2026-07-14T12:00:00Z", int64(9e18), int64(-9e18), 0, "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z", "noon", nil)
		},
		"n": func() any { return pick(rng, 1, math.MaxInt32, int64(math.MaxInt32)+1, -1.5, true, nil) },
		"who": func() any {
			return pick(rng, map[string]any{"name": "x"}, map[string]any{}, map[string]any{"name": nil},
				map[string]any{"name": "y", "tags": []any{"a", nil}}, map[string]any{"tags": []any{}}, []any{1}, "who", nil)
		},
		"day": func() any { return pick(rng, "2026-07-14", 2000000000, -2000000000, "0000-01-01", "not a day", nil) },
		"ok":  func() any { return pick(rng, true, false, 0, "yes", nil) },
	}
	good := map[string]any{"amount": 1.25, "ts": "2026-07-14T12:00:00Z", "n": 7, "who": map[string]any{"name": "x"}, "day": "2026-07-14", "ok": true}
	for _, name := range slices.Sorted(maps.Keys(fields)) { // in one order, so a seed is one input
		gen := fields[name]
		switch rng.Intn(12) {
		case 0: // absent (ts keeps its good default)
		case 1: // anything
			obj[name] = gen()
		default:
			obj[name] = good[name]
		}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return b
}

func pick(rng *rand.Rand, vs ...any) any { return vs[rng.Intn(len(vs))] }
