package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// producer sends the bench's messages: warm-up ones with ids -1, -2, ...
// then the measured ones with ids 0, 1, ...; each carries the time it was
// handed to the client as produced_at (and as its event time).
type producer struct {
	cl       *kgo.Client
	topic    string
	warm     int64 // warm-up messages sent
	n        int64 // measured messages sent
	extra    int64 // messages sent after the measured ones (ids n, n+1, ...)
	failures atomic.Int64
}

func (p *producer) total() int64 { return p.warm + p.n + p.extra }

const payload = "a payload of some sixty bytes, the same in every message....."

func (p *producer) send(ctx context.Context, id int64) {
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	v := []byte(`{"id":` + strconv.FormatInt(id, 10) + `,"event_ts":"` + now + `","payload":"` + payload +
		`","produced_at":"` + now + `"}`)
	p.cl.Produce(ctx, &kgo.Record{Topic: p.topic, Value: v}, func(_ *kgo.Record, err error) {
		if err != nil {
			p.failures.Add(1)
		}
	})
}

// warmUp sends a message a second until the table has a snapshot with
// rows: the sink is then consuming and committing.
func (p *producer) warmUp(ctx context.Context, cat catalog.Catalog, proc *watched, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if !proc.alive() {
			return errors.New("the sink exited during the warm-up")
		}
		p.warm++
		p.send(ctx, -p.warm)
		if err := p.cl.Flush(ctx); err != nil {
			return err
		}
		for range 10 {
			if rows, _ := tableRows(ctx, cat); rows > 0 {
				return nil
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return fmt.Errorf("no commit within %s of warm-up", limit)
}

// run sends the measured messages at rate a second for d, in steps of
// 10 ms (rate 0: as fast as the client takes them).
func (p *producer) run(ctx context.Context, rate int, d time.Duration) {
	start := time.Now()
	for {
		el := time.Since(start)
		if el >= d {
			return
		}
		target := int64(el.Seconds() * float64(rate))
		if rate <= 0 {
			target = p.n + 1000
		}
		for ; p.n < target; p.n++ {
			p.send(ctx, p.n)
		}
		if rate > 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// keepUp goes on sending at rate (1000 a second with rate 0) after the
// measured messages, as a stream does, until the table holds them all
// and a second more, so that the last measured ones commit as in a
// steady stream and not as the stream stops.
func (p *producer) keepUp(ctx context.Context, cat catalog.Catalog, proc *watched, rate int, limit time.Duration) error {
	if rate <= 0 {
		rate = 1000
	}
	want := p.warm + p.n + int64(rate)
	start := time.Now()
	for time.Since(start) < limit {
		for el := time.Since(start); p.extra < int64(el.Seconds()*float64(rate)); p.extra++ {
			p.send(ctx, p.n+p.extra)
		}
		if rows, _ := tableRows(ctx, cat); rows >= want {
			return nil
		}
		if !proc.alive() {
			return errors.New("the sink exited")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the measured messages not in the table %s after the last one was sent", limit)
}

// waitRows waits until the table holds want rows.
func waitRows(ctx context.Context, cat catalog.Catalog, proc *watched, want int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var rows int64
	for time.Now().Before(deadline) {
		rows, _ = tableRows(ctx, cat)
		if rows >= want {
			return nil
		}
		if !proc.alive() {
			return fmt.Errorf("the sink exited with %d of %d rows in the table", rows, want)
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("%d of %d rows in the table after %s", rows, want, limit)
}

// tableRows is the current snapshot's total-records.
func tableRows(ctx context.Context, cat catalog.Catalog) (int64, error) {
	tbl, err := cat.LoadTable(ctx, eventsIdent)
	if err != nil {
		return 0, err
	}
	s := tbl.CurrentSnapshot()
	if s == nil || s.Summary == nil {
		return 0, nil
	}
	return strconv.ParseInt(s.Summary.Properties["total-records"], 10, 64)
}

func createTopic(ctx context.Context, cl *kgo.Client, topic string, partitions int32) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, 1
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30_000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	for _, rt := range resp.Topics {
		if rt.ErrorCode != 0 {
			return fmt.Errorf("create topic %s: error code %d", rt.Topic, rt.ErrorCode)
		}
	}
	return nil
}
