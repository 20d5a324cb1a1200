package kafka

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/sink/decode"
)

// unreachable is a broker address nothing listens on.
const unreachable = "127.0.0.1:1"

func stopSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
	)
}

// A clean stop commits what is pending, then leaves the group, whose
// revoke then has nothing left to commit: no warning is logged.
func TestStopCommitsBeforeTheRevoke(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "orders", stopSchema(), *iceberg.UnpartitionedSpec, nil)
	c := openConsumer(t, cat, ident, "orders")
	var logs bytes.Buffer
	c.log = slog.New(slog.NewTextHandler(&logs, nil))
	c.assigned = map[topicPartition]bool{{"orders", 0}: true}
	if _, err := c.s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.write(ctx, c.cfg.Topic, 0, records(`{"id": "a"}`, `{"id": "b"}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.finish(ctx); err != nil {
		t.Fatalf("final commit: %v", err)
	}
	c.revoke(ctx, nil, map[string][]int32{"orders": {0}}) // what leaving the group calls
	if strings.Contains(logs.String(), "WARN") {
		t.Errorf("a clean stop logged a warning:\n%s", logs.String())
	}
	if len(c.assigned) != 0 {
		t.Errorf("assigned after the revoke = %v, want none", c.assigned)
	}
	if got := column(t, c.s.Table(), "id"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("table ids = %v, want [a b]", got)
	}
}

func runUnreachable(t *testing.T, ctx context.Context, timeout time.Duration) (error, string, time.Duration) {
	t.Helper()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "orders", stopSchema(), *iceberg.UnpartitionedSpec, nil)
	s, err := sink.Open(ctx, cat, ident)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	start := time.Now()
	err = Run(ctx, s, Config{
		Brokers: []string{unreachable}, Topic: "orders", Group: "g", Format: decode.JSONFormat(),
		ConnectTimeout: timeout, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	return err, logs.String(), time.Since(start)
}

// Brokers that cannot be reached stop Run with ErrNotConnected after the
// connect timeout, with a warning before that says so.
func TestRunGivesUpOnUnreachableBrokers(t *testing.T) {
	err, logs, took := runUnreachable(t, context.Background(), 2*time.Second)
	if !errors.Is(err, ErrNotConnected) || !strings.Contains(err.Error(), "brokers "+unreachable+" unreachable") {
		t.Fatalf("Run = %v, want ErrNotConnected naming the brokers", err)
	}
	if took > 6*time.Second {
		t.Errorf("Run gave up after %s, want about 2s", took)
	}
	if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "unreachable") {
		t.Errorf("no warning about the brokers before giving up:\n%s", logs)
	}
}

// A stop while the brokers are not answering ends Run within a second or
// two, without an error (nothing was pending).
func TestRunStopsWhileConnecting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	err, logs, took := runUnreachable(t, ctx, 0)
	if err != nil {
		t.Fatalf("Run after a stop = %v, want nil", err)
	}
	if took > 4*time.Second {
		t.Errorf("Run took %s to stop, want under 4s:\n%s", took, logs)
	}
	if strings.Contains(logs, "WARN") {
		t.Errorf("a stop logged a warning:\n%s", logs)
	}
}

func TestRunRefusesANegativeConnectTimeout(t *testing.T) {
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "orders", stopSchema(), *iceberg.UnpartitionedSpec, nil)
	s, err := sink.Open(t.Context(), cat, ident)
	if err != nil {
		t.Fatal(err)
	}
	err = Run(t.Context(), s, Config{Brokers: []string{unreachable}, Topic: "t", Group: "g", Format: decode.JSONFormat(), ConnectTimeout: -time.Second})
	if !errors.Is(err, ErrConfig) {
		t.Errorf("Run with ConnectTimeout -1s = %v, want ErrConfig", err)
	}
}

// records are Kafka records of values, at offsets 0, 1, ...
func records(values ...string) []*kgo.Record {
	out := make([]*kgo.Record, len(values))
	for i, v := range values {
		out[i] = &kgo.Record{Value: []byte(v), Offset: int64(i)}
	}
	return out
}
