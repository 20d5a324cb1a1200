package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/icerun/icerun/sink"
)

// fleet is the coordinated mode of [Config].ControlTopic: every member
// hands its files over on the control topic, and the member the group
// assigns the control topic's one partition is the committer. Its
// fields are guarded by the consumer's mu.
//
// Election is the group's assignment: in a generation exactly one member
// holds the control partition; a member that lost it (a rebalance, a
// session timeout while it was stopped) may still commit a round it had
// planned, and the table refuses whatever of it another committer landed
// (see [sink.Committer]). The control topic's offset is committed, with
// the group's generation (a zombie's commit is refused by the broker),
// only up to the oldest hand-over still waiting: a new committer reads
// again what was not landed, and what was is dropped by the range check.
type fleet struct {
	topic    string
	open     func(ctx context.Context) (*sink.Committer, error)
	interval time.Duration
	com      *sink.Committer  // non-nil while this member holds the control partition
	gen      int32            // the generation com was elected in
	offsets  map[string]int64 // control record offset of each waiting hand-over, by ID
	next     int64            // one past the last control record read; -1: none read
	last     time.Time        // com's last round
}

// createControlTopic creates the control topic (one partition) when it is
// missing.
func createControlTopic(ctx context.Context, cl *kgo.Client, topic string) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, 1, -1
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 10_000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("kafka: create control topic %s: %w", topic, err)
	}
	for _, rt := range resp.Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("kafka: create control topic %s: %w", topic, err)
		}
	}
	return nil
}

// elected makes this member the committer of generation gen.
func (c *consumer) elected(ctx context.Context, gen int32) {
	f := c.fleet
	if f.com == nil {
		com, err := f.open(ctx)
		if err != nil {
			c.log.Warn("kafka fleet: cannot open the committer (the control partition waits for the next assignment)", slog.Any("error", err))
			return
		}
		f.com, f.offsets, f.next, f.last = com, map[string]int64{}, -1, time.Now()
	}
	f.gen = gen
	f.com.Fence(gen)
	c.log.Info("kafka fleet: committer", slog.String("control_topic", f.topic), slog.Int("generation", int(gen)))
}

// demoted ends this member's time as the committer.
func (c *consumer) demoted(ctx context.Context) {
	f := c.fleet
	if f.com == nil {
		return
	}
	if err := f.com.Close(context.WithoutCancel(ctx)); err != nil {
		c.log.Warn("kafka fleet: committer close", slog.Any("error", err))
	}
	f.com = nil
	c.log.Info("kafka fleet: no longer the committer", slog.String("control_topic", f.topic))
}

// receive adds the hand-overs of control records to the committer.
func (c *consumer) receive(recs []*kgo.Record) {
	f := c.fleet
	if f.com == nil {
		return
	}
	for _, r := range recs {
		f.next = r.Offset + 1
		h, err := sink.UnmarshalHandOver(r.Value)
		if err == nil {
			err = f.com.Add(h)
		}
		if err != nil {
			c.log.Warn("kafka fleet: control record dropped", slog.Int64("offset", r.Offset), slog.Any("error", err))
			continue
		}
		if _, ok := f.offsets[h.ID]; !ok {
			f.offsets[h.ID] = r.Offset
		}
	}
}

// tick hands this member's pending rows over when the cadence asks for
// it, and, on the committer, lands the waiting hand-overs once an
// interval has passed since its last round.
func (c *consumer) tick(ctx context.Context) error {
	f := c.fleet
	_, gen := c.cl.GroupMetadata()
	h, err := c.s.HandOverIfDue(ctx, gen)
	if err != nil {
		return err
	}
	if err := c.produce(ctx, h); err != nil {
		return err
	}
	if f.com != nil && time.Since(f.last) >= f.interval {
		f.last = time.Now()
		c.land(ctx)
	}
	return nil
}

// produce sends h to the control topic and waits for the broker's
// acknowledgement. A hand-over that was not sent fails with ErrFenced:
// the member's chain now has a gap, so it resumes from the table.
func (c *consumer) produce(ctx context.Context, h *sink.HandOver) error {
	if h == nil {
		return nil
	}
	b, err := h.Marshal(c.s.Table())
	if err != nil {
		return err
	}
	rec := &kgo.Record{Topic: c.fleet.topic, Key: []byte(h.Member), Value: b}
	if err := c.cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return fmt.Errorf("%w: hand-over %s not sent to %s: %w", sink.ErrFenced, h.ID, c.fleet.topic, err)
	}
	return nil
}

// land runs one committer round, then commits the control topic's offset
// up to the oldest hand-over still waiting. Its failures are logged: the
// hand-overs stay waiting for the next round.
func (c *consumer) land(ctx context.Context) {
	f := c.fleet
	l, err := f.com.Commit(ctx)
	if err != nil {
		c.log.Warn("kafka fleet: committer round failed (tried again next interval)", slog.Any("error", err))
	} else if len(l.Landed) > 0 || len(l.Dropped) > 0 {
		c.log.Info("kafka fleet: committer round", slog.Int64("snapshot", l.SnapshotID), slog.Int("landed", len(l.Landed)),
			slog.Int("dropped", len(l.Dropped)), slog.Int64("rows", l.AddedRows))
	}
	upTo := f.next
	waiting := map[string]bool{}
	for _, id := range f.com.Waiting() {
		waiting[id] = true
		if off, ok := f.offsets[id]; ok && (upTo < 0 || off < upTo) {
			upTo = off
		}
	}
	for id := range f.offsets {
		if !waiting[id] {
			delete(f.offsets, id)
		}
	}
	if upTo < 0 {
		return
	}
	set := map[string]map[int32]kgo.EpochOffset{f.topic: {0: {Epoch: -1, Offset: upTo}}}
	c.cl.CommitOffsetsSync(ctx, set, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err == nil {
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					err = errors.Join(err, kerr.ErrorForCode(p.ErrorCode))
				}
			}
		}
		if err != nil {
			c.log.Warn("kafka fleet: control offset commit refused (another committer took over?)", slog.Any("error", err))
		}
	})
}

// finishFleet hands the pending rows over and, on the committer, lands
// what fits, before the member leaves the group.
func (c *consumer) finishFleet(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	_, gen := c.cl.GroupMetadata()
	h, err := c.s.HandOver(ctx, gen)
	if err == nil {
		err = c.produce(ctx, h)
	}
	if c.fleet.com != nil {
		c.land(ctx)
		c.demoted(ctx)
	}
	return errors.Join(err, c.s.Close(ctx))
}
