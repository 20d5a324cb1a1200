package kafka

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/sink/decode"
)

func TestRunFleetConfig(t *testing.T) {
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "orders", stopSchema(), *iceberg.UnpartitionedSpec, nil)
	alone, err := sink.Open(t.Context(), cat, ident)
	if err != nil {
		t.Fatal(err)
	}
	member, err := sink.Open(t.Context(), cat, ident, sink.WithHandOver("m"))
	if err != nil {
		t.Fatal(err)
	}
	open := func(ctx context.Context) (*sink.Committer, error) { return sink.OpenCommitter(ctx, cat, ident) }
	base := Config{Brokers: []string{unreachable}, Topic: "t", Group: "g", Format: decode.JSONFormat()}
	for _, tc := range []struct {
		name string
		s    *sink.Sink
		edit func(*Config)
	}{
		{"member without a control topic", member, func(*Config) {}},
		{"control topic without a member", alone, func(c *Config) { c.ControlTopic, c.Committer = "ctl", open }},
		{"control topic without a committer", member, func(c *Config) { c.ControlTopic = "ctl" }},
		{"control topic with a regex", member, func(c *Config) { c.ControlTopic, c.Committer, c.Topic, c.TopicRegex = "ctl", open, "", "t.*" }},
	} {
		cfg := base
		tc.edit(&cfg)
		if err := Run(t.Context(), tc.s, cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: Run = %v, want ErrConfig", tc.name, err)
		}
	}
}
