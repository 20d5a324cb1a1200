//go:build integration

package integration

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/sink"
)

// droppedRound matches a committer round's log line that dropped hand-overs.
var droppedRound = regexp.MustCompile(`kafka fleet: committer round.* dropped=[1-9]`)

// TestKafkaFleetChaos runs `icerun sink -control-topic` processes of one
// group (ICERUN_FLEET_PROCS, default 5) on one table: members hand over,
// the member holding the control partition commits. It SIGKILLs members
// and the committer, SIGSTOPs the committer past the session timeout and
// lets it run on (a zombie), SIGKILLs the broker and starts it again
// (ICERUN_KAFKA_RESTART), duplicates every control record as it appears
// (a test hook beside the fleet: each hand-over arrives twice, the copy
// while the original waits or after it landed) and produces the control
// topic's records again midway (a replayed control topic). The members run
// with -event-time (the messages span four days, so days close) and
// -dead-letter: a share of the messages is held back and produced with the
// batch after next, most of them past the lateness bound (late rows, for
// the side table), and a share of the records is not a row (chaosBad). Then
// every on-time message must be in the table exactly once, every late row
// in the late table and every bad record in the dead-letter table exactly
// once at its partition and offset, row by row, and every append snapshot
// of the table must be a committer's.
func TestKafkaFleetChaos(t *testing.T) {
	brokers := os.Getenv("ICERUN_KAFKA_BROKERS")
	if brokers == "" {
		if required("kafka") {
			t.Fatal("target kafka is set but ICERUN_KAFKA_BROKERS is not")
		}
		t.Skip("no Kafka broker: run under scripts/integration kafka")
	}
	bin := filepath.Join(t.TempDir(), "icerun")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/icerun").CombinedOutput(); err != nil {
		t.Fatalf("build icerun: %v\n%s", err, out)
	}
	for _, tg := range chaosTargets(t) {
		t.Run(tg.name, func(t *testing.T) { kafkaFleetChaos(t, brokers, bin, tg.make(t)) })
	}
}

// kafkaFleetChaos is one fleet chaos run against the catalog cc.
func kafkaFleetChaos(t *testing.T, brokers, bin string, cc chaosCatalog) {
	ctx := context.Background()
	began := time.Now()
	procs, messages := envInt("ICERUN_FLEET_PROCS", 5), envInt("ICERUN_FLEET_MESSAGES", 6000)
	parts := 2 * procs
	// The event times span four days whatever the scale.
	spacing := 4 * 24 * time.Hour / time.Duration(messages)
	cat, err := cc.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer closeCatalog(cat)
	ident := icetable.Identifier{cc.ns, "events"}
	deadIdent := icetable.Identifier{cc.ns, "events_dead"}
	if err := cat.CreateNamespace(ctx, icetable.Identifier{cc.ns}, nil); err != nil {
		t.Fatal(err)
	}
	sch, spec := chaosEventsSchema()
	if _, err := cat.CreateTable(ctx, ident, sch, catalog.WithPartitionSpec(&spec)); err != nil {
		t.Fatal(err)
	}
	topic := fmt.Sprintf("fleet-%d", time.Now().UnixNano())
	control := topic + "-control"
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	createTopic(t, cl, topic, int32(parts))

	const interval = time.Second
	g := &sinkGroup{t: t, cmd: make([]*exec.Cmd, procs), out: make([]*bytes.Buffer, procs)}
	g.start = func(i int) {
		args := append([]string{"sink", strings.Join(ident, "."), "-brokers", brokers, "-topic", topic,
			"-group", "g-" + topic, "-control-topic", control, "-commit-interval", interval.String(),
			"-session-timeout", chaosSession.String(), "-event-time", "event_time", "-allowed-lateness", chaosLateness.String(),
			"-dead-letter", strings.Join(deadIdent, ".")}, cc.args...)
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), cc.env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		g.cmd[i], g.out[i] = cmd, &out
	}
	for i := range procs {
		g.start(i)
	}
	defer g.killAll()
	// committer is the process that holds the control partition now
	// (the last to log that it became the committer and did not log
	// the end of it since), or a random one.
	committer := func() int {
		best, at := rand.IntN(procs), -1
		for i, out := range g.out {
			s := out.String()
			won, lost := strings.LastIndex(s, `msg="kafka fleet: committer"`), strings.LastIndex(s, "no longer the committer")
			if won > lost && won > at {
				best, at = i, won
			}
		}
		return best
	}

	// The producer: 3% of the messages are held back and produced after
	// the messages of the batch after next (to the partition of their seq,
	// whose watermark moved on by a day or more, so most arrive past the
	// lateness bound: late rows; expectChaos decides each one's fate by
	// the offsets), 1% of the records are bad (chaosBad, a record of their
	// own); every record is kept with its position.
	var sent []chaosSent
	bad := map[string]bool{} // by deadKey
	produced, nbad, held := 0, 0, 0
	var heldBack [][]*kgo.Record // by batch
	produce := func(n int, last bool) {
		var recs, hold []*kgo.Record
		for range n {
			id, v := chaosMessage(produced, spacing)
			r := &kgo.Record{Key: []byte(id), Value: []byte(v), Partition: int32(produced % parts)}
			if rand.IntN(100) < 3 {
				hold = append(hold, r)
				held++
			} else {
				recs = append(recs, r)
			}
			if rand.IntN(100) == 0 {
				recs = append(recs, &kgo.Record{Value: []byte(chaosBad(nbad)), Partition: int32(produced % parts)})
				nbad++
			}
			produced++
		}
		heldBack = append(heldBack, hold)
		if k := len(heldBack) - 3; k >= 0 { // held back two batches ago
			recs, heldBack[k] = append(recs, heldBack[k]...), nil
		}
		if last {
			for k, h := range heldBack {
				recs, heldBack[k] = append(recs, h...), nil
			}
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		for _, res := range cl.ProduceSync(pctx, recs...) {
			if res.Err != nil {
				t.Fatalf("produce: %v", res.Err)
			}
			if res.Record.Key == nil {
				bad[deadKey(string(res.Record.Value), res.Record.Partition, res.Record.Offset)] = true
				continue
			}
			seq, _ := strconv.Atoi(strings.TrimPrefix(string(res.Record.Key), "m"))
			sent = append(sent, chaosSent{seq: seq, part: res.Record.Partition, off: res.Record.Offset})
		}
	}
	// replay produces every control record so far again: each hand-over
	// twice, the old ones long after they landed.
	replayed := 0
	replay := func() {
		rc, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeTopics(control), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		var again []*kgo.Record
		pctx, stop := context.WithTimeout(ctx, 3*time.Second)
		defer stop()
		for pctx.Err() == nil {
			rc.PollFetches(pctx).EachRecord(func(r *kgo.Record) {
				again = append(again, &kgo.Record{Topic: control, Key: r.Key, Value: r.Value})
			})
		}
		if err := rc.ProduceSync(ctx, again...).FirstErr(); err != nil {
			t.Fatalf("replay the control topic: %v", err)
		}
		replayed += len(again)
		t.Logf("produced the control topic's %d records again", len(again))
	}

	// The duplicating hook: a client of its own tails the control topic
	// and produces every record it has not produced itself again, at once.
	dctx, stopDup := context.WithCancel(ctx)
	dupDone := make(chan int)
	go func() { dupDone <- duplicateControl(dctx, t, brokers, control) }()
	defer func() {
		if stopDup != nil {
			stopDup()
			<-dupDone
		}
	}()

	events := []string{"member", "committer", "replay", "broker", "zombie", "member", "committer"}
	watch := newProgress(t, cc, ident)
	step := messages / (len(events) + 1)
	for k := 0; k <= len(events); k++ {
		n := step
		if k == len(events) {
			n = messages - produced
		}
		produce(n, k == len(events))
		if k == len(events) {
			break
		}
		time.Sleep(time.Duration(500+rand.IntN(1500)) * time.Millisecond)
		switch events[k] {
		case "member", "committer":
			i := committer()
			if events[k] == "member" {
				i = (i + 1 + rand.IntN(procs-1)) % procs
			}
			_ = g.cmd[i].Process.Signal(syscall.SIGKILL)
			_ = g.cmd[i].Wait()
			g.done = append(g.done, g.out[i].String())
			g.kills++
			t.Logf("SIGKILLed the %s (sink %d) after %d messages", events[k], i, produced)
			g.start(i)
		case "zombie":
			i := committer()
			_ = g.cmd[i].Process.Signal(syscall.SIGSTOP)
			t.Logf("SIGSTOPped the committer (sink %d) after %d messages", i, produced)
			time.Sleep(chaosSession + 3*time.Second)
			_ = g.cmd[i].Process.Signal(syscall.SIGCONT)
			g.pauses++
		case "replay":
			replay()
		case "broker":
			restartBroker(t)
		}
		// Pace the chaos over the run: the next batch once the table holds
		// the rows of the batches before and half of this one's.
		main, _ := expectChaos(sent, false, true, spacing)
		watch.until(t, int64(len(main)-n/2), "half of batch "+strconv.Itoa(k))
	}
	main, late := expectChaos(sent, false, true, spacing)
	watch.reached(t, int64(len(main)), "every message")
	(&progress{cat: watch.cat, ident: sink.LateTable(ident), ends: watch.ends}).reached(t, int64(len(late)), "every late row")
	(&progress{cat: watch.cat, ident: deadIdent, ends: watch.ends}).reached(t, int64(len(bad)), "every bad record")
	stopDup()
	duplicated := <-dupDone
	stopDup = nil
	g.stopAll()
	got := readChaosRows(t, cc, ident, spacing)
	diff := diffChaos(main, got, map[int]bool{})
	gotLate := readLateRows(t, cc, ident, spacing)
	lateDiff := diffChaos(late, gotLate, map[int]bool{})
	deadDiff := checkDeadLetters(t, cc, deadIdent, bad)

	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	appends, mine := 0, 0
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Operation == icetable.OpAppend {
			appends++
		}
	}
	all := strings.Join(g.done, "\n")
	mine = strings.Count(all, `msg="sink committer commit"`)
	// A member's commits of the table (not of its side tables).
	own := regexp.MustCompile(`msg="sink commit" table=` + regexp.QuoteMeta(strings.Join(ident, ".")) + `\s`)
	t.Logf("fleet: %d messages (%d held back, %d bad records), %d sink processes on %d partitions, %d SIGKILLs (members and committers), %d SIGSTOPped committers resumed, %d control records duplicated by the hook, %d produced again by the replay, %s; "+
		"table: %d rows checked for %d expected: %s; late table: %d rows checked for %d expected: %s; dead-letter table: %d bad records: %s; "+
		"%d append snapshots (%d committer commits logged), %d side table commits logged, %d committer rounds that dropped hand-overs, %d member restarts from the table, %d elections, %d compactions; data files per day: %s",
		produced, held, len(bad), procs, parts, g.kills, g.pauses, duplicated, replayed, time.Since(began).Round(time.Second), len(got), len(main), diff,
		len(gotLate), len(late), lateDiff, len(bad), deadDiff,
		appends, mine, strings.Count(all, `msg="sink commit"`)-len(own.FindAllString(all, -1)), len(droppedRound.FindAllString(all, -1)),
		strings.Count(all, "resuming from the table"), strings.Count(all, `msg="kafka fleet: committer"`), strings.Count(all, `msg="sink compaction"`), filesPerDay(t, cc, ident))
	if !diff.none() || !lateDiff.none() || !deadDiff.none() {
		t.Errorf("table: %s; late table: %s; dead-letter table: %s", diff, lateDiff, deadDiff)
	}
	if len(late) == 0 || len(bad) == 0 {
		t.Errorf("%d late rows and %d bad records produced: the run exercised no side table", len(late), len(bad))
	}
	if duplicated == 0 {
		t.Errorf("the hook duplicated no control record")
	}
	if n := len(own.FindAllString(all, -1)); n > 0 {
		t.Errorf("a member committed the table on its own (%d sink commits of it logged)", n)
	}
}

// dupHeader marks the control records duplicateControl produced.
const dupHeader = "icerun-test-duplicate"

// duplicateControl tails the control topic from its start until ctx ends
// and produces every record it did not produce itself again, at once;
// it returns how many it produced. Produce errors (a broker restart) lose
// a copy, not the test.
func duplicateControl(ctx context.Context, t *testing.T, brokers, control string) int {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeTopics(control), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Errorf("duplicate the control topic: %v", err)
		return 0
	}
	defer cl.Close()
	n := 0
	for ctx.Err() == nil {
		var again []*kgo.Record
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			for _, h := range r.Headers {
				if h.Key == dupHeader {
					return
				}
			}
			again = append(again, &kgo.Record{Topic: control, Key: r.Key, Value: r.Value, Headers: []kgo.RecordHeader{{Key: dupHeader}}})
		})
		if len(again) == 0 {
			continue
		}
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		for _, res := range cl.ProduceSync(pctx, again...) {
			if res.Err == nil {
				n++
			}
		}
		cancel()
	}
	return n
}
