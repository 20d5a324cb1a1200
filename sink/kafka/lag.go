package kafka

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/icerun/icerun/sink"
)

// ErrNotAssigned is matched by the error of [Status.Ready] while the
// member holds no partition: connecting, joining the group, or a spare
// member of a group with more members than partitions.
var ErrNotAssigned = errors.New("kafka: no partition assigned")

// Status is what [Run] reports while it runs, for a readiness probe and
// for gauges: the partitions assigned to this member, the broker's high
// watermark of each and the table's position. Give Run one in
// [Config.Status] to read it. Safe for concurrent use; the zero value is
// ready to use.
type Status struct {
	mu   sync.Mutex
	s    *sink.Sink
	hwms map[topicPartition]int64 // of the assigned partitions; -1 while unknown
}

// PartitionStatus is one assigned partition in [Status.Partitions].
type PartitionStatus struct {
	Topic     string
	Partition int32
	// HighWatermark is the offset the broker gives the next message of
	// the partition, from the last fetch or offset request; -1 while
	// unknown.
	HighWatermark int64
	// Offset is the highest offset of the partition the table holds; -1
	// when it holds none.
	Offset int64
	// Lag is HighWatermark - Offset - 1: the messages the broker holds
	// and the table does not (rows not yet committed, and those not yet
	// fetched), never below 0; -1 while HighWatermark is unknown.
	Lag int64
}

type topicPartition struct {
	topic     string
	partition int32
}

// start binds st to the sink Run feeds.
func (st *Status) start(s *sink.Sink) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s, st.hwms = s, map[topicPartition]int64{}
}

// The methods that Run calls (unexported) do nothing on a nil Status:
// the consumers of the tests have none.

// assign adds partitions, high watermark unknown.
func (st *Status) assign(topic string, parts []int32) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, p := range parts {
		if _, ok := st.hwms[topicPartition{topic, p}]; !ok {
			st.hwms[topicPartition{topic, p}] = -1
		}
	}
}

// revoke removes partitions.
func (st *Status) revoke(topic string, parts []int32) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, p := range parts {
		delete(st.hwms, topicPartition{topic, p})
	}
}

// stop removes every partition: Run returned.
func (st *Status) stop() {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	clear(st.hwms)
}

// setHighWatermark records hwm of an assigned partition; a partition no
// longer assigned is ignored.
func (st *Status) setHighWatermark(topic string, p int32, hwm int64) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	tp := topicPartition{topic, p}
	if _, ok := st.hwms[tp]; ok && hwm >= 0 {
		st.hwms[tp] = hwm
	}
}

// assigned lists the assigned partitions, by topic.
func (st *Status) assigned() map[string][]int32 {
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	out := map[string][]int32{}
	for tp := range st.hwms {
		out[tp.topic] = append(out[tp.topic], tp.partition)
	}
	for _, ps := range out {
		slices.Sort(ps)
	}
	return out
}

// Partitions lists the partitions assigned to this member, by topic and
// partition, with the table's positions as the sink last loaded or
// committed them.
func (st *Status) Partitions() []PartitionStatus {
	st.mu.Lock()
	s := st.s
	out := make([]PartitionStatus, 0, len(st.hwms))
	for tp, hwm := range st.hwms {
		out = append(out, PartitionStatus{Topic: tp.topic, Partition: tp.partition, HighWatermark: hwm, Offset: -1, Lag: -1})
	}
	st.mu.Unlock()
	slices.SortFunc(out, func(a, b PartitionStatus) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	if s == nil {
		return out
	}
	pos := s.Health().Positions
	for i, p := range out {
		if off, ok := pos[sink.SourcePartition{Source: Source(p.Topic), Partition: p.Partition}]; ok {
			out[i].Offset = off
		}
		if p.HighWatermark >= 0 {
			out[i].Lag = max(p.HighWatermark-out[i].Offset-1, 0)
		}
	}
	return out
}

// Ready reports whether the sink Run feeds is doing its work at now: it
// returns an error wrapping [ErrNotAssigned] while no partition is
// assigned to this member, or the error of [sink.Health.Check] (wrapping
// [sink.ErrUnhealthy]) while its commits fail, hang or are not made, and
// nil otherwise.
func (st *Status) Ready(now time.Time) error {
	st.mu.Lock()
	s, n := st.s, len(st.hwms)
	st.mu.Unlock()
	if s == nil || n == 0 {
		return ErrNotAssigned
	}
	return s.Health().Check(now)
}

// The consumer's gauges, one point per assigned partition, with the
// attributes icerun.table, messaging.destination.name (the topic) and
// messaging.destination.partition.id:
//
//	icerun.kafka.lag             messages of the partition the table does not hold (PartitionStatus.Lag)
//	icerun.kafka.position        the highest offset the table holds (PartitionStatus.Offset)
//	icerun.kafka.high_watermark  the broker's high watermark (PartitionStatus.HighWatermark)
//
// A partition whose high watermark is not yet known has no lag point.
const (
	gaugeLag           = "icerun.kafka.lag"
	gaugePosition      = "icerun.kafka.position"
	gaugeHighWatermark = "icerun.kafka.high_watermark"
)

// observe registers st's gauges on mp (the global provider when nil),
// for the table named table. Unregister the registration when Run ends.
func (st *Status) observe(mp metric.MeterProvider, table string) (metric.Registration, error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter("github.com/icerun/icerun/sink/kafka")
	lag, err := m.Int64ObservableGauge(gaugeLag, metric.WithUnit("{message}"), metric.WithDescription("messages of the partition the table does not hold: high watermark - table offset - 1"))
	if err != nil {
		return nil, err
	}
	pos, err := m.Int64ObservableGauge(gaugePosition, metric.WithDescription("highest offset of the partition the table holds (-1: none)"))
	if err != nil {
		return nil, err
	}
	hwm, err := m.Int64ObservableGauge(gaugeHighWatermark, metric.WithDescription("the broker's high watermark of the partition"))
	if err != nil {
		return nil, err
	}
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, p := range st.Partitions() {
			attrs := metric.WithAttributes(attribute.String("icerun.table", table),
				attribute.String("messaging.destination.name", p.Topic), attribute.Int("messaging.destination.partition.id", int(p.Partition)))
			o.ObserveInt64(pos, p.Offset, attrs)
			if p.HighWatermark >= 0 {
				o.ObserveInt64(hwm, p.HighWatermark, attrs)
				o.ObserveInt64(lag, p.Lag, attrs)
			}
		}
		return nil
	}, lag, pos, hwm)
}

// watermarksEvery is how often Run asks the brokers for the high
// watermarks of its partitions, beside those its fetches bring: the lag
// of a partition stays true while the sink does not fetch it (stuck in a
// commit, or before the first fetch).
const watermarksEvery = 10 * time.Second

// watchWatermarks asks the brokers for the high watermarks of the
// assigned partitions every watermarksEvery until ctx ends.
func (c *consumer) watchWatermarks(ctx context.Context) {
	t := time.NewTicker(watermarksEvery)
	defer t.Stop()
	for {
		c.refreshWatermarks(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// refreshWatermarks asks the brokers once (a ListOffsets request for the
// latest offsets, routed to the partitions' leaders by the client) and
// records the answers in c's Status. A failure is logged at debug level:
// the next round tries again, and the lag keeps its last value.
func (c *consumer) refreshWatermarks(ctx context.Context) {
	parts := c.status.assigned()
	if len(parts) == 0 {
		return
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	for topic, ps := range parts {
		t := kmsg.NewListOffsetsRequestTopic()
		t.Topic = topic
		for _, p := range ps {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p, -1, -1 // -1: the latest offset
			t.Partitions = append(t.Partitions, rp)
		}
		req.Topics = append(req.Topics, t)
	}
	rctx, cancel := context.WithTimeout(ctx, probeWait)
	defer cancel()
	resp, err := req.RequestWith(rctx, c.cl)
	if err != nil {
		c.log.Debug("kafka high watermarks", slog.Any("error", err))
		return
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				c.log.Debug("kafka high watermark", slog.String("topic", rt.Topic), slog.Int("partition", int(rp.Partition)), slog.Any("error", err))
				continue
			}
			c.status.setHighWatermark(rt.Topic, rp.Partition, rp.Offset)
		}
	}
}

// noteFetched records the high watermarks the fetches brought.
func (c *consumer) noteFetched(fetches kgo.Fetches) {
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if p.Err == nil {
			c.status.setHighWatermark(p.Topic, p.Partition, p.HighWatermark)
		}
	})
}

// tableName names s's table for the gauges' attribute.
func tableName(s *sink.Sink) string { return strings.Join(s.Table().Identifier(), ".") }
