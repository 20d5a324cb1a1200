package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.opentelemetry.io/otel/metric"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/sink/decode"
)

// Config says what to consume.
type Config struct {
	Brokers []string
	// Topic, Topics and TopicRegex name what to consume: the topics
	// named (Topic and those of Topics), or, instead, every topic whose
	// whole name matches the regular expression TopicRegex (Go syntax;
	// topics created later are picked up at the client's metadata
	// refresh). Every partition of every topic keeps its own position in
	// the table (source kafka:<topic>, see [Source]).
	Topic      string
	Topics     []string
	TopicRegex string
	Group      string         // the consumer group; used by this adapter only
	Decode     decode.Decoder // of the records' values; or Format
	// Format, used when Decode is nil, makes the decoder from the sink's
	// table schema, and again whenever that schema changes.
	Format decode.Format
	// Evolve (with Format) adds the columns and the fields of struct
	// columns the decoder reports new to the table
	// ([sink.Sink.AddColumns]: the pending rows are committed first, then
	// the schema change), then decodes the records again with the new
	// schema (and adds what they still report new, up to three changes a
	// poll). Without it, fields the table lacks are ignored.
	Evolve bool
	// MaxPollRecords bounds the records handled per poll (default 10,000).
	MaxPollRecords int
	// SessionTimeout is how long the group waits for a silent member
	// (a killed process) before it moves its partitions (default
	// [DefaultSessionTimeout]). The broker refuses a value outside its
	// group.min.session.timeout.ms and group.max.session.timeout.ms
	// (6 s and 30 min by default).
	SessionTimeout time.Duration
	// ConnectTimeout bounds the wait, from the start of Run, for the
	// brokers to answer a metadata request naming the topic (or for a
	// first assignment): past it Run returns an error wrapping
	// [ErrNotConnected] that says which was missing (the brokers or the
	// topic). A warning saying so is logged after a few seconds of
	// waiting. Default 0: wait for ever (warning once a minute).
	ConnectTimeout time.Duration
	// Options are more franz-go options (TLS, SASL, client id); the
	// adapter's own (seed brokers, group, topic, offsets) win.
	Options []kgo.Opt
	// Skip names records to pass without decoding them, when the stream
	// reaches them: [sink.Sink.Skip] moves the position over each (the
	// commit names it, see sink.SummarySkipped), so that a message the
	// operator chose to drop no longer stops the stream.
	Skip   []Offset
	Logger *slog.Logger // default: nothing is logged
	// Status, when set, is kept up to date by Run with the partitions
	// assigned, their high watermarks and the table's positions, for a
	// readiness probe ([Status.Ready]) or a report.
	Status *Status
	// ControlTopic, when set, runs the sink as a member of a fleet (the
	// sink opened with sink.WithHandOver): it hands its data files over
	// on this topic (one partition, created when missing) instead of
	// committing, and the member the group assigns its partition lands
	// every member's hand-overs in one snapshot per CommitInterval (see
	// fleet.go and [sink.Committer]). Not with TopicRegex. Default "":
	// the sink commits its own rows.
	ControlTopic string
	// CommitInterval is the committer's interval in a fleet (default
	// 10 s, the sink's own default).
	CommitInterval time.Duration
	// Committer opens the fleet's committer on the sink's table, with
	// the sink's options (with sink.WithEventTime the committer compacts
	// the partitions the watermark closes; the members commit their own
	// late rows and dead letters); required with ControlTopic.
	Committer func(ctx context.Context) (*sink.Committer, error)
	// MeterProvider has the consumer's gauges of lag, table position and
	// high watermark per partition (see lag.go). Default: the global
	// provider (otel.GetMeterProvider at Run).
	MeterProvider metric.MeterProvider
}

// DefaultSessionTimeout is the session timeout of [Config] when it sets
// none: a member killed without leaving the group (SIGKILL, a lost node)
// has its partitions moved to the others this long after its last
// heartbeat (franz-go sends one every 3 s). The Kafka client's own
// default, 45 s, leaves those partitions unread for most of a minute; a
// member that stops cleanly leaves the group at once whatever the
// timeout.
const DefaultSessionTimeout = 10 * time.Second

// Source is the SourcePartition.Source of a partition of topic.
func Source(topic string) string { return "kafka:" + topic }

// ErrConfig is returned by [Run] for an incomplete Config.
var ErrConfig = errors.New("kafka: bad config")

// ErrNotConnected is returned by [Run] when the brokers did not answer,
// or the topic did not exist, within [Config.ConnectTimeout].
var ErrNotConnected = errors.New("kafka: not connected")

// Run consumes the topics of cfg into s until ctx ends, then commits what is
// pending (a graceful stop: SIGTERM cancels ctx) and leaves the group. It
// returns nil after a graceful stop, or the first error the sink cannot
// recover from (a conflict, a fenced commit, a key another sink
// committed or a schema another writer changed under the pending rows
// is recovered: the sink starts again from the table's positions and the
// source is sought there). A record the decoder rejects
// goes to [sink.Sink.Reject]: to the sink's dead-letter table, or, without
// one, it stops Run with a *sink.BadMessageError after committing the
// rows before it.
func Run(ctx context.Context, s *sink.Sink, cfg Config) error {
	if len(cfg.Brokers) == 0 || cfg.Group == "" || (cfg.Decode == nil && cfg.Format == nil) || s == nil {
		return fmt.Errorf("%w: brokers, topic, group, decoder and sink are required", ErrConfig)
	}
	sel, err := newSelection(cfg)
	if err != nil {
		return err
	}
	for _, k := range cfg.Skip {
		if !sel.has(k.Topic) {
			return fmt.Errorf("%w: skip %s: topic %q is not consumed (%s)", ErrConfig, k, k.Topic, sel)
		}
	}
	if cfg.Evolve && cfg.Format == nil {
		return fmt.Errorf("%w: Evolve needs a Format", ErrConfig)
	}
	if cfg.ConnectTimeout < 0 {
		return fmt.Errorf("%w: connect timeout %s: must be 0 (no limit) or more", ErrConfig, cfg.ConnectTimeout)
	}
	if cfg.SessionTimeout < 0 {
		return fmt.Errorf("%w: session timeout %s: must be 0 (the default) or more", ErrConfig, cfg.SessionTimeout)
	}
	if (cfg.ControlTopic != "") != (s.Member() != "") || (cfg.ControlTopic != "" && (cfg.Committer == nil || cfg.TopicRegex != "")) {
		return fmt.Errorf("%w: a control topic needs a member sink (sink.WithHandOver) and a Committer, and no topic regex; a member sink needs a control topic", ErrConfig)
	}
	if cfg.CommitInterval <= 0 {
		cfg.CommitInterval = 10 * time.Second
	}
	if cfg.MaxPollRecords <= 0 {
		cfg.MaxPollRecords = 10_000
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.Status == nil {
		cfg.Status = &Status{}
	}
	cfg.Status.start(s)
	defer cfg.Status.stop()
	reg, err := cfg.Status.observe(cfg.MeterProvider, tableName(s))
	if err != nil {
		return fmt.Errorf("%w: meters: %w", ErrConfig, err)
	}
	defer reg.Unregister()
	if len(cfg.Skip) > 0 {
		cfg.Logger.Info("kafka sink: records to skip when reached", slog.Any("skip", cfg.Skip))
	}
	c := &consumer{s: s, cfg: cfg, sel: sel, log: cfg.Logger, assigned: map[topicPartition]bool{}, status: cfg.Status}
	topics := sel.consume()
	if cfg.ControlTopic != "" {
		c.fleet = &fleet{topic: cfg.ControlTopic, open: cfg.Committer, interval: cfg.CommitInterval}
		topics = append(append([]string{}, topics...), cfg.ControlTopic)
	}
	// The client's own context: cancelled on the way out, it ends a join
	// or sync the broker holds (up to the group's rebalance timeout),
	// which leaving the group does not interrupt.
	cctx, cancelClient := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelClient()
	opts := append(append([]kgo.Opt{}, cfg.Options...),
		kgo.WithContext(cctx),
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(topics...),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.OnPartitionsAssigned(c.assign),
		kgo.AdjustFetchOffsetsFn(c.startOffsets),
		kgo.OnPartitionsRevoked(c.revoke),
		kgo.OnPartitionsLost(c.revoke),
	)
	if sel.re != nil {
		opts = append(opts, kgo.ConsumeRegex())
	}
	opts = append(opts, kgo.SessionTimeout(cfg.SessionTimeout))
	if c.fleet != nil {
		// Eager: every rebalance revokes every partition, so every member
		// resumes from the table's positions in each generation, and the
		// committer's fence at the generation drops nothing a member
		// still builds on.
		opts = append(opts, kgo.Balancers(kgo.RoundRobinBalancer()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	if c.fleet != nil {
		if err := createControlTopic(ctx, cl, cfg.ControlTopic); err != nil {
			cl.Close()
			return err
		}
	}
	c.cl = cl
	wctx, stopWatch := context.WithCancel(cctx)
	var watching sync.WaitGroup
	watching.Go(func() { c.watchWatermarks(wctx) })
	err = c.loop(ctx)
	stopWatch()
	watching.Wait()
	cerr := c.finish(ctx)
	c.leave(ctx, cancelClient)
	if err == nil && cerr != nil {
		err = fmt.Errorf("kafka: final commit: %w", cerr)
	}
	c.log.Info("kafka sink stopped", slog.String("topics", sel.String()), slog.Any("stats", s.Stats()), slog.Any("error", err))
	return err
}

// consumer serialises the sink between the poll loop and the group
// callbacks with mu.
type consumer struct {
	s        *sink.Sink
	cfg      Config
	sel      selection
	cl       *kgo.Client
	log      *slog.Logger
	mu       sync.Mutex
	assigned map[topicPartition]bool
	// stale is set when a revoke's commit failed: the sink dropped the
	// pending rows of the partitions it keeps too (the cooperative
	// balancer revokes some partitions only), so the records fetched for
	// them since are past what the table holds. The poll goroutine then
	// discards its fetches and seeks every kept partition back to the
	// table's positions before it writes again.
	stale bool
	dec   decode.Decoder // made by cfg.Format for the schema decSchema
	// decSchema is the table schema id dec was made for.
	decSchema int
	// closed is set once the final commit closed the sink: the revoke
	// that leaving the group calls has nothing left to commit.
	closed bool
	// connected is set by the first assignment.
	connected bool
	status    *Status // what Run reports (lag.go); nil in tests
	fleet     *fleet  // nil: the sink commits its own rows (fleet.go)
}

// finish commits what is pending and closes the sink, before the group
// is left (while the partitions are still this member's).
func (c *consumer) finish(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.fleet != nil {
		return c.finishFleet(ctx)
	}
	return c.s.Close(context.WithoutCancel(ctx))
}

// leaveWait bounds each step of leaving the group.
const leaveWait = time.Second

// leave leaves the group and closes the client in a few seconds at most,
// so that the group moves the partitions at once rather than after the
// session timeout. A join or sync in flight is not waited for: the
// broker holds a join until the group's rebalance completes (up to its
// rebalance timeout, a minute), and leaving waits for it; past leaveWait
// the LeaveGroup request goes out beside it, then cancelClient ends it.
func (c *consumer) leave(ctx context.Context, cancelClient context.CancelFunc) {
	ctx = context.WithoutCancel(ctx)
	lctx, cancel := context.WithTimeout(ctx, leaveWait)
	defer cancel()
	if err := c.cl.LeaveGroupContext(lctx); err != nil && lctx.Err() != nil {
		if member, _ := c.cl.GroupMetadata(); member != "" {
			rctx, cancel := context.WithTimeout(ctx, leaveWait)
			defer cancel()
			req := kmsg.NewPtrLeaveGroupRequest()
			req.Group, req.MemberID = c.cfg.Group, member
			m := kmsg.NewLeaveGroupRequestMember()
			m.MemberID = member
			m.Reason = kmsg.StringPtr("icerun sink stopping")
			req.Members = append(req.Members, m)
			if _, err := req.RequestWith(rctx, c.cl); err != nil {
				c.log.Info("kafka leave group", slog.String("group", c.cfg.Group), slog.Any("error", err))
			}
		}
	}
	cancelClient()
	c.cl.Close()
}

// topicPartition is one partition of one topic.

func (tp topicPartition) sp() sink.SourcePartition {
	return sink.SourcePartition{Source: Source(tp.topic), Partition: tp.partition}
}

func (c *consumer) assign(ctx context.Context, cl *kgo.Client, parts map[string][]int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.connected = true
	for topic, ps := range parts {
		if c.fleet != nil && topic == c.fleet.topic {
			_, gen := cl.GroupMetadata()
			c.elected(ctx, gen)
			continue
		}
		if !c.sel.has(topic) {
			continue
		}
		for _, p := range ps {
			c.assigned[topicPartition{topic, p}] = true
		}
		c.status.assign(topic, ps)
	}
	c.log.Info("kafka partitions assigned", slog.Any("partitions", parts))
}

// startOffsets replaces the broker's offsets with the table's.
func (c *consumer) startOffsets(ctx context.Context, offs map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var sps []sink.SourcePartition
	for topic, parts := range offs {
		if c.fleet != nil && topic == c.fleet.topic {
			continue // the control topic resumes from the group's committed offset
		}
		for p := range parts {
			sps = append(sps, topicPartition{topic, p}.sp())
		}
	}
	start, err := c.s.Start(ctx, sps...)
	if err != nil {
		return nil, err // franz-go retries the assignment
	}
	for topic, parts := range offs {
		if c.fleet != nil && topic == c.fleet.topic {
			continue
		}
		for p := range parts {
			parts[p] = kgo.NewOffset().At(start[topicPartition{topic, p}.sp()] + 1).WithEpoch(-1)
		}
	}
	c.log.Info("kafka start offsets from the table", slog.Any("positions", start))
	return offs, nil
}

func (c *consumer) revoke(ctx context.Context, _ *kgo.Client, parts map[string][]int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Once closed (the final commit ran before the group is left),
	// nothing is pending. A member commits nothing: its pending rows are
	// dropped when its next assignment starts again from the table.
	if c.fleet != nil {
		if _, ok := parts[c.fleet.topic]; ok {
			c.demoted(ctx)
		}
		if !c.closed {
			if _, err := c.s.Start(ctx); err != nil { // drops what was not handed over
				c.log.Warn("kafka fleet revoke: reload failed", slog.Any("error", err))
			}
		}
	}
	if !c.closed && c.fleet == nil {
		if _, err := c.s.Commit(ctx); err != nil {
			c.log.Warn("kafka revoke: commit failed (the new owner replays from the table; the partitions kept are read again from it)", slog.Any("error", err))
			c.stale = true
		}
	}
	for topic, ps := range parts {
		for _, p := range ps {
			delete(c.assigned, topicPartition{topic, p})
		}
		c.status.revoke(topic, ps)
	}
}

// loop polls and writes until ctx ends.
func (c *consumer) loop(ctx context.Context) error {
	w := connectWatch{start: time.Now(), timeout: c.cfg.ConnectTimeout}
	for ctx.Err() == nil {
		if !w.done {
			if err := c.checkConnected(ctx, &w); err != nil {
				return err
			}
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fetches := c.cl.PollRecords(pctx, c.cfg.MaxPollRecords)
		cancel()
		if ctx.Err() != nil {
			c.cl.AllowRebalance()
			return nil
		}
		err := c.handle(ctx, fetches)
		c.cl.AllowRebalance()
		if err != nil {
			return err
		}
	}
	return nil
}

// connectWatch is the wait for the brokers and the topic, from start
// until done.
type connectWatch struct {
	start    time.Time
	timeout  time.Duration // 0: no limit
	nextWarn time.Duration // of waiting, when the next warning is due; 0: the first
	done     bool
}

// connectWarnAfter is how long a wait lasts before its first warning
// (half the timeout when that is shorter); the next come once a minute.
const connectWarnAfter = 5 * time.Second

// checkConnected ends w once the brokers answer with the topic's
// metadata or a first assignment came. Until then it warns past
// connectWarnAfter, and past w.timeout it returns an error wrapping
// ErrNotConnected that says what is missing.
func (c *consumer) checkConnected(ctx context.Context, w *connectWatch) error {
	c.mu.Lock()
	assigned := c.connected
	c.mu.Unlock()
	if assigned {
		w.done = true
		return nil
	}
	missing := c.probe(ctx)
	switch {
	case missing == "":
		w.done = true
		return nil
	case ctx.Err() != nil:
		return nil // stopping
	}
	waited := time.Since(w.start)
	if w.timeout > 0 && waited >= w.timeout {
		return fmt.Errorf("%w: %s (gave up after %s)", ErrNotConnected, missing, w.timeout)
	}
	if w.nextWarn == 0 {
		w.nextWarn = connectWarnAfter
		if w.timeout > 0 && w.timeout/2 < w.nextWarn {
			w.nextWarn = w.timeout / 2
		}
	}
	if waited >= w.nextWarn {
		limit := "no limit"
		if w.timeout > 0 {
			limit = fmt.Sprintf("giving up after %s", w.timeout)
		}
		c.log.Warn("kafka sink: not connected: "+missing+"; retrying ("+limit+")",
			slog.String("topics", c.sel.String()), slog.Duration("waited", waited.Round(time.Second)))
		w.nextWarn = waited + time.Minute
	}
	return nil
}

// probeWait bounds one metadata request of probe.
const probeWait = time.Second

// probe asks the brokers for the metadata of the topics (of every topic
// with a regex). It returns what is missing (the brokers, a topic, a
// topic the regex matches), or "" when nothing is.
func (c *consumer) probe(ctx context.Context) string {
	pctx, cancel := context.WithTimeout(ctx, probeWait)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	for _, name := range c.sel.names {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, t)
	}
	req.AllowAutoTopicCreation = false
	resp, err := req.RequestWith(pctx, c.cl)
	if err != nil {
		return fmt.Sprintf("brokers %s unreachable: %v", strings.Join(c.cfg.Brokers, ","), err)
	}
	found := map[string]error{}
	for _, t := range resp.Topics {
		if t.Topic != nil && c.sel.has(*t.Topic) {
			found[*t.Topic] = kerr.ErrorForCode(t.ErrorCode)
		}
	}
	if c.sel.re != nil {
		for _, err := range found {
			if err == nil {
				return ""
			}
		}
		return fmt.Sprintf("no topic matches %q", c.sel.re.String())
	}
	for _, name := range c.sel.names {
		err, ok := found[name]
		switch {
		case !ok || errors.Is(err, kerr.UnknownTopicOrPartition):
			return fmt.Sprintf("topic %q does not exist", name)
		case err != nil:
			return fmt.Sprintf("topic %q: %v", name, err)
		}
	}
	return ""
}

func (c *consumer) handle(ctx context.Context, fetches kgo.Fetches) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stale { // see consumer.stale: these records may start past the table
		c.stale = false
		return c.reseek(ctx)
	}
	c.noteFetched(fetches)
	for _, fe := range fetches.Errors() {
		if errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled) {
			continue
		}
		c.log.Warn("kafka fetch", slog.String("topic", fe.Topic), slog.Int("partition", int(fe.Partition)), slog.Any("error", fe.Err))
	}
	var werr error
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if c.fleet != nil && p.Topic == c.fleet.topic {
			c.receive(p.Records)
			return
		}
		if werr != nil || len(p.Records) == 0 || !c.sel.has(p.Topic) {
			return
		}
		werr = c.writeSkipping(ctx, p.Topic, p.Partition, p.Records)
	})
	switch {
	case werr == nil && c.fleet != nil:
		werr = c.tick(ctx)
	case werr == nil:
		_, werr = c.s.CommitIfDue(ctx)
	}
	if werr == nil {
		return nil
	}
	if errors.Is(werr, sink.ErrFenced) || errors.Is(werr, sink.ErrKeyCommitted) || errors.Is(werr, commit.ErrConflict) || errors.Is(werr, sink.ErrSchemaChanged) {
		c.log.Warn("kafka sink: commit lost; resuming from the table", slog.Any("error", werr))
		return c.reseek(ctx)
	}
	return werr
}

// evolveRounds bounds the schema changes of one poll: each adds what
// the records decoded for the schema before report new.
const evolveRounds = 3

// write hands the records of part to the sink in offset order: runs of
// decoded rows to Write, each record the decoder skipped (a change
// stream's tombstone) to Pass, each record the decoder rejected to Reject, and so
// is a record whose row the table cannot hold (a *sink.RowError of Write):
// one bad message never stops the stream.
func (c *consumer) write(ctx context.Context, topic string, part int32, recs []*kgo.Record) error {
	values := recordValues(recs)
	d, err := c.decode(values)
	// A change can make more new fields visible (a struct column added
	// for one writer schema, with a field more in another): up to
	// evolveRounds changes per poll.
	for round := 0; err == nil && len(d.NewColumns) > 0 && c.cfg.Evolve && round < evolveRounds; round++ {
		d.Rows.Release()
		c.log.Info("kafka sink: new fields", slog.Any("columns", d.NewColumns))
		if err := c.s.AddColumns(ctx, d.NewColumns...); err != nil {
			return err
		}
		d, err = c.decode(values) // for the new schema
	}
	if err != nil {
		return fmt.Errorf("kafka: decode %s/%d offsets %d..%d: %w", topic, part, recs[0].Offset, recs[len(recs)-1].Offset, err)
	}
	defer d.Rows.Release()
	sp := topicPartition{topic, part}.sp()
	var row int64         // next row of d.Rows
	var run []*kgo.Record // the records of the rows not yet written
	flush := func() error {
		for len(run) > 0 {
			err := c.writeRows(ctx, sp, d.Rows, row, run)
			var bad *sink.RowError
			if !errors.As(err, &bad) || bad.Row < 0 || bad.Row >= len(run) {
				row, run = row+int64(len(run)), nil
				return err
			}
			if bad.Row > 0 {
				if err := c.writeRows(ctx, sp, d.Rows, row, run[:bad.Row]); err != nil {
					return err
				}
			}
			r := run[bad.Row]
			if err := c.s.RejectMessage(ctx, sp, r.Offset, message(topic, r), bad.Err.Error()); err != nil {
				return err
			}
			row, run = row+int64(bad.Row)+1, run[bad.Row+1:]
		}
		return nil
	}
	next, skip := 0, 0 // of d.Bad, of d.Skipped
	for i, r := range recs {
		if skip < len(d.Skipped) && d.Skipped[skip] == i {
			if err := flush(); err != nil {
				return err
			}
			if err := c.s.Pass(ctx, sp, r.Offset); err != nil {
				return err
			}
			skip++
			continue
		}
		if next < len(d.Bad) && d.Bad[next].Index == i {
			if err := flush(); err != nil {
				return err
			}
			if err := c.s.RejectMessage(ctx, sp, r.Offset, message(topic, r), d.Bad[next].Reason); err != nil {
				return err
			}
			next++
			continue
		}
		run = append(run, r)
	}
	return flush()
}

// writeRows writes the rows of rows from row on, one per record of recs.
func (c *consumer) writeRows(ctx context.Context, sp sink.SourcePartition, rows arrow.RecordBatch, row int64, recs []*kgo.Record) error {
	n := int64(len(recs))
	part := rows.NewSlice(row, row+n)
	defer part.Release()
	offsets := make([]int64, n)
	for i, r := range recs {
		offsets[i] = r.Offset
	}
	return c.s.Write(ctx, sp, offsets, part)
}

// reseek moves every assigned partition to the table's positions.
func (c *consumer) reseek(ctx context.Context) error {
	sps := make([]sink.SourcePartition, 0, len(c.assigned))
	for tp := range c.assigned {
		sps = append(sps, tp.sp())
	}
	start, err := c.s.Start(ctx, sps...)
	if err != nil {
		return err
	}
	set := map[string]map[int32]kgo.EpochOffset{}
	for tp := range c.assigned {
		if set[tp.topic] == nil {
			set[tp.topic] = map[int32]kgo.EpochOffset{}
		}
		set[tp.topic][tp.partition] = kgo.EpochOffset{Epoch: -1, Offset: start[tp.sp()] + 1}
	}
	c.cl.SetOffsets(set)
	return nil
}

// recordValues are the values of recs, in order; a nil value (a
// tombstone) stays nil.
func recordValues(recs []*kgo.Record) [][]byte {
	values := make([][]byte, len(recs))
	for i, r := range recs {
		values[i] = r.Value
	}
	return values
}

// decode decodes values with cfg.Decode, or with cfg.Format's decoder for
// the sink's current table schema.
func (c *consumer) decode(values [][]byte) (decode.Decoded, error) {
	if c.cfg.Format == nil {
		return c.cfg.Decode(values)
	}
	sch := c.s.Table().Schema()
	if c.dec == nil || c.decSchema != sch.ID {
		sc, err := icetable.SchemaToArrowSchema(sch, nil, true, false)
		if err != nil {
			return decode.Decoded{}, err
		}
		dec, err := c.cfg.Format(sc, c.cfg.Evolve)
		if err != nil {
			return decode.Decoded{}, err
		}
		c.dec, c.decSchema = dec, sch.ID
	}
	return c.dec(values)
}
