package kafka

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

func TestSelection(t *testing.T) {
	good := []struct {
		cfg      Config
		in, out  []string
		describe string
	}{
		{Config{Topic: "orders"}, []string{"orders"}, []string{"orders2", "order"}, "orders"},
		{Config{Topics: []string{"b", " a", "b"}}, []string{"a", "b"}, []string{"c"}, "a,b"},
		{Config{Topic: "a", Topics: []string{"b"}}, []string{"a", "b"}, []string{"ab"}, "a,b"},
		{Config{TopicRegex: `orders\..*`}, []string{"orders.eu", "orders.us"}, []string{"xorders.eu", "orders"}, `^(?:orders\..*)$`},
		{Config{TopicRegex: `a|b`}, []string{"a", "b"}, []string{"ab", "xa"}, `^(?:a|b)$`},
	}
	for _, tc := range good {
		sel, err := newSelection(tc.cfg)
		if err != nil {
			t.Errorf("newSelection(%+v) = %v", tc.cfg, err)
			continue
		}
		for _, topic := range tc.in {
			if !sel.has(topic) {
				t.Errorf("newSelection(%+v).has(%q) = false, want true", tc.cfg, topic)
			}
		}
		for _, topic := range tc.out {
			if sel.has(topic) {
				t.Errorf("newSelection(%+v).has(%q) = true, want false", tc.cfg, topic)
			}
		}
		if got := sel.String(); got != tc.describe {
			t.Errorf("newSelection(%+v).String() = %q, want %q", tc.cfg, got, tc.describe)
		}
	}
	for _, cfg := range []Config{{}, {Topics: []string{" "}}, {Topic: "a", TopicRegex: "b"}, {TopicRegex: "("}} {
		if _, err := newSelection(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("newSelection(%+v) = %v, want ErrConfig", cfg, err)
		}
	}
}

// The partitions of several topics keep their own positions in the one
// table: partition 0 of topics a and b resume each after its own offset.
func TestTopicsKeepTheirOwnPositions(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "orders", stopSchema(), *iceberg.UnpartitionedSpec, nil)
	c := openConsumer(t, cat, ident, "a")
	c.sel = selection{names: []string{"a", "b"}}
	if _, err := c.s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.write(ctx, "a", 0, records(`{"id": "a0"}`, `{"id": "a1"}`, `{"id": "a2"}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.write(ctx, "b", 0, records(`{"id": "b0"}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.finish(ctx); err != nil {
		t.Fatal(err)
	}
	pos, err := sink.Positions(c.s.Table())
	if err != nil {
		t.Fatal(err)
	}
	if a, b := pos[sink.SourcePartition{Source: "kafka:a"}], pos[sink.SourcePartition{Source: "kafka:b"}]; a != 2 || b != 0 || len(pos) != 2 {
		t.Errorf("positions = %v, want kafka:a/0 at 2 and kafka:b/0 at 0", pos)
	}
	r := openConsumer(t, cat, ident, "a")
	r.sel = selection{names: []string{"a", "b"}}
	offs, err := r.startOffsets(ctx, map[string]map[int32]kgo.Offset{"a": {0: kgo.NewOffset()}, "b": {0: kgo.NewOffset()}})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := offs["a"][0].EpochOffset().Offset, offs["b"][0].EpochOffset().Offset; a != 3 || b != 1 {
		t.Errorf("start offsets = a %d, b %d; want 3 and 1", a, b)
	}
}
