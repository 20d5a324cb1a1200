package kafka

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

func TestParseOffset(t *testing.T) {
	good := map[string]Offset{
		"orders/0@41":    {"orders", 0, 41},
		"a.b-c_d/12@0":   {"a.b-c_d", 12, 0},
		"we/ird@x/3@100": {"we/ird@x", 3, 100},
	}
	for in, w := range good {
		got, err := ParseOffset(in)
		if err != nil || got != w {
			t.Errorf("ParseOffset(%q) = %+v, %v; want %+v", in, got, err, w)
		}
		if got.String() != in {
			t.Errorf("ParseOffset(%q).String() = %q", in, got.String())
		}
	}
	for _, in := range []string{"", "orders", "orders@4", "orders/0", "/0@1", "orders/-1@4", "orders/0@-4", "orders/x@4", "orders/0@4x", "orders/99999999999@1"} {
		if _, err := ParseOffset(in); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseOffset(%q) = %v, want ErrConfig", in, err)
		}
	}
}

// A record Config.Skip names is passed without being decoded: a poison
// message that stops the stream without a dead-letter table no longer
// does, the rows around it land and the position covers it.
func TestConsumerSkipsNamedRecord(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "orders", stopSchema(), *iceberg.UnpartitionedSpec, nil)
	recs := records(`{"id": "a"}`, `{oops`, `{"id": "c"}`)
	c := openConsumer(t, cat, ident, "orders")
	if err := c.writeSkipping(ctx, "orders", 0, recs); !errors.Is(err, sink.ErrBadMessage) {
		t.Fatalf("write of a poison message without a skip = %v, want ErrBadMessage", err)
	}
	if err := c.s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	c = openConsumer(t, cat, ident, "orders")
	c.cfg.Skip = []Offset{{"other", 0, 1}, {"orders", 1, 1}, {"orders", 0, 1}}
	if _, err := c.s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.writeSkipping(ctx, "orders", 0, recs); err != nil {
		t.Fatal(err)
	}
	if err := c.finish(ctx); err != nil {
		t.Fatal(err)
	}
	if got := column(t, c.s.Table(), "id"); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("table ids = %v, want [a c]", got)
	}
	if st := c.s.Stats(); st.Skipped != 1 {
		t.Errorf("skipped = %d, want 1", st.Skipped)
	}
	pos, err := sink.Positions(c.s.Table())
	if err != nil || pos[sink.SourcePartition{Source: "kafka:orders"}] != 2 {
		t.Errorf("positions = %v, %v; want kafka:orders/0 at 2", pos, err)
	}
}
