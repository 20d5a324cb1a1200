//go:build integration

package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKafkaSinkChaos streams a topic into a day-partitioned table with
// several `icerun sink` processes in one consumer group while the producer
// sends more: processes are SIGKILLed at random instants and restarted
// (every message a killed sink held uncommitted is delivered again, and
// its partitions move to the others and back), SIGSTOPped past the
// session timeout and continued (a zombie), the broker is SIGKILLed and
// restarted once when scripts/integration provides ICERUN_KAFKA_RESTART,
// and a share of the messages is produced twice with new offsets (a
// producer's retry), some right after the first copy, some with the next
// batch, to the partition after the first copy's. Half the messages carry
// their event time as RFC 3339 text, half as microseconds; 0.5% of the
// records are not rows of the table and must land in the dead-letter table
// once each. With ICERUN_KAFKA_DAYS the sinks run with event time (one hour of
// allowed lateness) over messages spanning that many days, so days close,
// are compacted, and retries whose day closed meanwhile are late. The test
// decides from every record's position what the sinks must do with it
// (expectChaos): keyed mode, the table holds exactly the unique messages
// that were not late; position mode, exactly the records that were not
// late; the side table exactly the late records, at their positions.
// Checked row by row (id, seq, event time, and the position of late rows),
// on the embedded SQLite catalog and, when scripts/integration pg s3 runs
// too, on PostgreSQL + S3.
//
// Scale (environment): ICERUN_KAFKA_MESSAGES (default 20,000),
// ICERUN_KAFKA_KILLS (SIGKILLs of a sink, default 4), ICERUN_KAFKA_PAUSES
// (SIGSTOPs of a sink past the session timeout, default 1),
// ICERUN_KAFKA_PROCS (sink processes, default 3), ICERUN_KAFKA_PARTITIONS
// (default twice the processes), ICERUN_KAFKA_DUPLICATES (percent produced
// twice, default 1), ICERUN_KAFKA_BROKER_KILLS (default 1 with
// ICERUN_KAFKA_RESTART, else 0), ICERUN_KAFKA_DAYS (default 0: no event
// time), ICERUN_KAFKA_COMMIT_INTERVAL (default 300ms), ICERUN_KAFKA_FORMAT
// (avro: Confluent-framed Avro messages), ICERUN_KAFKA_EVOLVE (set: the
// messages from the midpoint on carry a field the table lacks, the sinks
// run with -evolve, and every row must hold its message's value of it),
// ICERUN_KAFKA_MODE (upsert: the messages are upserts and deletes of a few
// hundred keys with a version, the sinks run -upsert id -order version
// -delete-when op=d, and the table must hold each key's latest state:
// kafka_chaos_upsert_test.go).
//
// With event time, two sinks may compact the same closed day at once; the
// loser commits nothing and goes on (TestSinkCompactionRaceIsNotFatal).
func TestKafkaSinkChaos(t *testing.T) {
	brokers := os.Getenv("ICERUN_KAFKA_BROKERS")
	if brokers == "" {
		if required("kafka") {
			t.Fatal("target kafka is set but ICERUN_KAFKA_BROKERS is not")
		}
		t.Skip("no Kafka broker: run under scripts/integration kafka")
	}
	cfg := chaosConfigFromEnv(brokers)
	dir := t.TempDir()
	bin := filepath.Join(dir, "icerun")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/icerun").CombinedOutput(); err != nil {
		t.Fatalf("build icerun: %v\n%s", err, out)
	}
	cfg.bin = bin
	if cfg.upsert && (os.Getenv("ICERUN_KAFKA_FORMAT") != "" || cfg.eventTime || cfg.evolveFrom > 0) {
		t.Fatal("ICERUN_KAFKA_MODE=upsert runs JSON messages without event time or -evolve")
	}
	if os.Getenv("ICERUN_KAFKA_FORMAT") == "avro" {
		cfg.avro = filepath.Join(dir, "schemas")
		if err := os.MkdirAll(cfg.avro, 0o755); err != nil {
			t.Fatal(err)
		}
		for id, sch := range map[int]string{1: chaosAvroSchema, 2: chaosAvroTagged} {
			if err := os.WriteFile(filepath.Join(cfg.avro, strconv.Itoa(id)+".avsc"), []byte(sch), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tg := range chaosTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			if cfg.upsert {
				t.Run("upsert", func(t *testing.T) { kafkaChaos(t, cfg, tg, chaosUpsert) })
				return
			}
			t.Run("keyed", func(t *testing.T) { kafkaChaos(t, cfg, tg, chaosKeyed) })
			if os.Getenv("ICERUN_KAFKA_MODE") == "keyed" {
				return
			}
			t.Run("positions", func(t *testing.T) { kafkaChaos(t, cfg, tg, chaosPositions) })
		})
	}
}

// chaosConfig is the scale of one chaos run.
type chaosConfig struct {
	brokers, restart, bin                              string
	avro                                               string // the writer schemas' directory with ICERUN_KAFKA_FORMAT=avro; "": JSON
	evolveFrom                                         int    // with ICERUN_KAFKA_EVOLVE, the first message with a tag field; 0: none
	messages, kills, pauses, brokerKills, procs, parts int
	dupPercent                                         int
	commitInterval                                     time.Duration
	spacing                                            time.Duration // event time between messages
	eventTime                                          bool          // the sinks run with -event-time
	upsert                                             bool          // ICERUN_KAFKA_MODE=upsert: the messages are changes of chaosKeys keys
	control                                            bool          // ICERUN_KAFKA_CONTROL=1: the sinks are a fleet (-control-topic), one committer
}

// chaosMode is what the sinks of one chaos scenario keep.
type chaosMode int

const (
	chaosPositions chaosMode = iota // every record once (positions only)
	chaosKeyed                      // every unique message once (-key)
	chaosUpsert                     // the latest state of each key (-upsert)
)

func chaosConfigFromEnv(brokers string) chaosConfig {
	c := chaosConfig{
		brokers:    brokers,
		restart:    os.Getenv("ICERUN_KAFKA_RESTART"),
		messages:   envInt("ICERUN_KAFKA_MESSAGES", 20_000),
		kills:      envCount("ICERUN_KAFKA_KILLS", 4),
		pauses:     envCount("ICERUN_KAFKA_PAUSES", 1),
		procs:      envInt("ICERUN_KAFKA_PROCS", 3),
		dupPercent: envCount("ICERUN_KAFKA_DUPLICATES", 1),
	}
	c.parts = envInt("ICERUN_KAFKA_PARTITIONS", 2*c.procs)
	// Without event time the messages are a second apart; with it they
	// span ICERUN_KAFKA_DAYS days, so that days close during the run.
	c.spacing = time.Second
	if days := envCount("ICERUN_KAFKA_DAYS", 0); days > 0 {
		c.eventTime, c.spacing = true, time.Duration(days)*24*time.Hour/time.Duration(c.messages)
	}
	if c.restart != "" { // else nothing can restart the broker
		c.brokerKills = envCount("ICERUN_KAFKA_BROKER_KILLS", 1)
	}
	if os.Getenv("ICERUN_KAFKA_EVOLVE") != "" {
		c.evolveFrom = c.messages / 2
	}
	c.upsert = os.Getenv("ICERUN_KAFKA_MODE") == "upsert"
	c.control = os.Getenv("ICERUN_KAFKA_CONTROL") != ""
	c.commitInterval = 300 * time.Millisecond
	if d, err := time.ParseDuration(os.Getenv("ICERUN_KAFKA_COMMIT_INTERVAL")); err == nil && d > 0 {
		c.commitInterval = d
	}
	return c
}

// chaosDay0 is the event time of the first message.
var chaosDay0 = time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)

// chaosLateness is the sinks' -allowed-lateness.
const chaosLateness = time.Hour

// chaosMessage is the JSON of message seq: id "m<seq>", event times
// spacing apart from chaosDay0 on (plus seq%1000 microseconds), as RFC
// 3339 text in +02:00 for even seqs, as microseconds for odd ones.
func chaosMessage(seq int, spacing time.Duration) (id, value string) {
	id = "m" + strconv.Itoa(seq)
	at := chaosEventTime(seq, spacing)
	if seq%2 == 0 {
		text := time.UnixMicro(at).In(time.FixedZone("", 2*3600)).Format(time.RFC3339Nano)
		return id, fmt.Sprintf(`{"id":%q,"seq":%d,"event_time":%q}`, id, seq, text)
	}
	return id, fmt.Sprintf(`{"id":%q,"seq":%d,"event_time":%d}`, id, seq, at)
}

func chaosEventTime(seq int, spacing time.Duration) int64 {
	return chaosDay0.Add(time.Duration(seq)*spacing + time.Duration(seq%1000)*time.Microsecond).UnixMicro()
}

// chaosBad is the n-th record that is not a row of the table: bad JSON, a
// wrong type, a required field missing.
func chaosBad(n int) string {
	return fmt.Sprintf([]string{`{"id":"b%d"`, `{"id":"b%d","seq":"x","event_time":0}`, `{"seq":%d,"event_time":0}`}[n%3], n)
}

// kafkaChaos runs the chaos scenario on one catalog target. chaosKeyed:
// the sinks dedupe by id and the table must hold every unique message
// once; chaosPositions: every record produced (a producer's duplicate too)
// once; chaosUpsert: each key's latest state (upsertChaosCheck).
func kafkaChaos(t *testing.T, cfg chaosConfig, tg chaosTarget, mode chaosMode) {
	keyed := mode == chaosKeyed
	ctx := context.Background()
	began := time.Now()
	cc := tg.make(t)
	cat, err := cc.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer closeCatalog(cat)
	ident := icetable.Identifier{cc.ns, "events"}
	if err := cat.CreateNamespace(ctx, icetable.Identifier{cc.ns}, nil); err != nil {
		t.Fatal(err)
	}
	sch, spec := chaosEventsSchema()
	if mode == chaosUpsert {
		sch, spec = upsertChaosSchema()
	}
	if _, err := cat.CreateTable(ctx, ident, sch, catalog.WithPartitionSpec(&spec)); err != nil {
		t.Fatal(err)
	}
	topic := fmt.Sprintf("events-%d", time.Now().UnixNano())
	// Records name their partition: a producer's duplicate goes to the
	// partition after its first copy's (another sink's, often).
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.brokers), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	createTopic(t, cl, topic, int32(cfg.parts))

	var modeArgs []string
	switch mode {
	case chaosKeyed:
		modeArgs = []string{"-key", "id,event_time"} // the table is partitioned by day(event_time)
	case chaosUpsert:
		modeArgs = []string{"-upsert", "id", "-order", "version", "-delete-when", "op=d"}
	}
	sinks := newSinkGroup(t, cfg, cc, ident, topic, modeArgs)
	defer sinks.killAll()

	// The producer: unique messages; dupPercent of them sent twice (a
	// producer retry: a new offset in the next partition), half right
	// after the first copy, half with the next batch; 0.5% bad records.
	// Every record is kept with its position.
	var sent []chaosSent
	ends := map[int32]int64{} // the last offset of each partition, a bad record's too
	bad := map[string]bool{}  // by deadKey
	produced, nbad := 0, 0
	var retries []*kgo.Record
	produce := func(n int) {
		recs := retries
		retries = nil
		for range n {
			id, v := cfg.message(produced)
			part := int32(produced % cfg.parts)
			r := &kgo.Record{Key: []byte(id), Value: []byte(v), Partition: part}
			recs = append(recs, r)
			if rand.IntN(100) < cfg.dupPercent {
				dup := &kgo.Record{Key: r.Key, Value: r.Value, Partition: (part + 1) % int32(cfg.parts)}
				if rand.IntN(2) == 0 {
					recs = append(recs, dup)
				} else {
					retries = append(retries, dup)
				}
			}
			if rand.IntN(200) == 0 {
				b := cfg.bad(nbad)
				nbad++
				recs = append(recs, &kgo.Record{Value: []byte(b), Partition: part})
			}
			produced++
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Minute) // a broker restart may be under way
		defer cancel()
		for _, res := range cl.ProduceSync(pctx, recs...) {
			if res.Err != nil {
				t.Fatalf("produce: %v", res.Err)
			}
			ends[res.Record.Partition] = max(ends[res.Record.Partition], res.Record.Offset)
			if res.Record.Key == nil { // a bad record
				bad[deadKey(string(res.Record.Value), res.Record.Partition, res.Record.Offset)] = true
				continue
			}
			seq, _ := strconv.Atoi(strings.TrimPrefix(string(res.Record.Key), "m"))
			sent = append(sent, chaosSent{seq: seq, part: res.Record.Partition, off: res.Record.Offset})
		}
	}

	// The chaos: kills SIGKILLs of a sink and brokerKills restarts of the
	// broker, in random order, one after each batch but the last.
	events := make([]string, 0, cfg.kills+cfg.brokerKills)
	for range cfg.kills {
		events = append(events, "sink")
	}
	for range cfg.brokerKills {
		events = append(events, "broker")
	}
	for range cfg.pauses {
		events = append(events, "pause")
	}
	rand.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
	step := cfg.messages / (len(events) + 1)
	watch := newProgress(t, cc, ident)
	watch.ends = func() string { return fmt.Sprint(ends) }
	if mode == chaosUpsert {
		// The table holds a row per key: the progress is the records at or
		// below the table's positions.
		watch.count = func(tbl *icetable.Table) int64 { return coveredRecords(t, tbl, topic, sent) }
	}
	for k := 0; k <= len(events); k++ {
		before := produced
		n := step
		if k == len(events) {
			n = cfg.messages - produced
		}
		produce(n)
		if k == len(events) {
			break
		}
		time.Sleep(time.Duration(200+rand.IntN(1300)) * time.Millisecond)
		switch events[k] {
		case "sink":
			sinks.killOne(produced)
		case "pause":
			sinks.pauseOne(produced)
		case "broker":
			t0 := time.Now()
			if out, err := exec.Command(cfg.restart).CombinedOutput(); err != nil {
				t.Fatalf("restart the broker: %v\n%s", err, out)
			}
			t.Logf("broker SIGKILLed and restarted after %d messages (%s)", produced, time.Since(t0).Round(time.Millisecond))
		}
		// Pace the chaos over the run: the next batch once the table holds
		// half of this one.
		watch.until(t, int64(before+n/2), "half of batch "+strconv.Itoa(k))
	}
	if len(retries) > 0 { // the last batch's retries
		produce(0)
	}
	main, late := expectChaos(sent, keyed, cfg.eventTime, cfg.spacing)
	if mode == chaosUpsert {
		watch.reached(t, int64(len(sent)), "every message")
		deadIdent := icetable.Identifier{cc.ns, "events_dead"}
		(&progress{cat: watch.cat, ident: deadIdent, ends: watch.ends}).until(t, int64(len(bad)), "every bad record")
		sinks.stopAll()
		if cfg.control && sinks.committerCommits() == 0 {
			t.Error("fleet mode: no committer commit in the sinks' logs")
		}
		upsertChaosCheck(t, cc, ident, topic, sent, ends, checkDeadLetters(t, cc, deadIdent, bad),
			fmt.Sprintf("%s upsert%s: %d changes of %d keys (%d records, %d produced twice), %d sink processes on %d partitions, %d SIGKILLs, %d SIGSTOP pauses past the session timeout, %d broker restarts, %s; %s",
				tg.name, map[bool]string{true: " (fleet, one committer)"}[cfg.control], produced, chaosKeys, len(sent), len(sent)-produced, cfg.procs, cfg.parts, sinks.kills, sinks.pauses, cfg.brokerKills,
				time.Since(began).Round(time.Second), sinks.figures()))
		return
	}
	watch.reached(t, int64(len(main)), "every message") // on a stall, the rows still tell what is missing
	deadIdent := icetable.Identifier{cc.ns, "events_dead"}
	(&progress{cat: watch.cat, ident: deadIdent, ends: watch.ends}).until(t, int64(len(bad)), "every bad record")
	sinks.stopAll()
	deadDiff := checkDeadLetters(t, cc, deadIdent, bad)

	got := readChaosRows(t, cc, ident, cfg.spacing)
	gotLate := readLateRows(t, cc, ident, cfg.spacing)
	twice, seen := map[int]bool{}, map[int]bool{}
	for _, r := range sent {
		twice[r.seq], seen[r.seq] = seen[r.seq], true
	}
	mainDiff := diffChaos(main, got, twice)
	lateDiff := diffChaos(late, gotLate, twice)
	t.Logf("%s keyed=%v: %d unique messages (%d records, %d produced twice), %d sink processes on %d partitions, %d SIGKILLs, %d SIGSTOP pauses past the session timeout, %d broker restarts, %s; table: %d rows checked for %d expected: %s; side table: %d late rows checked for %d expected: %s; dead-letter table: %d bad records: %s; %s; data files per day: %s",
		tg.name, keyed, produced, len(sent), len(sent)-produced, cfg.procs, cfg.parts, sinks.kills, sinks.pauses, cfg.brokerKills,
		time.Since(began).Round(time.Second), len(got), len(main), mainDiff, len(gotLate), len(late), lateDiff, len(bad), deadDiff, sinks.figures(), filesPerDay(t, cc, ident))
	if cfg.evolveFrom > 0 {
		wrong := checkEvolved(t, cc, ident, cfg)
		t.Logf("-evolve: the tag column added once the messages carried it; %d rows with a wrong tag", wrong)
		if wrong > 0 {
			t.Errorf("%d rows with a wrong tag (the messages from %d on carry one, the others none)", wrong, cfg.evolveFrom)
		}
	}
	if !mainDiff.none() || !lateDiff.none() || !deadDiff.none() {
		t.Errorf("table: %s; side table: %s; dead-letter table: %s", mainDiff, lateDiff, deadDiff)
	}
}

// envInt is the positive integer in variable k, else def.
func envInt(k string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
		return v
	}
	return def
}

// envCount is the integer at or above 0 in variable k, else def.
func envCount(k string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v >= 0 {
		return v
	}
	return def
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func createTopic(t *testing.T, cl *kgo.Client, topic string, partitions int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, 1
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30_000
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatalf("create topic: %v", err)
	}
	for _, rt := range resp.Topics {
		if rt.ErrorCode != 0 {
			t.Fatalf("create topic %s: error code %d", rt.Topic, rt.ErrorCode)
		}
	}
}

// chaosEventsSchema is the schema and partition spec of the chaos tests'
// events table: an id, a sequence number and an event time, by day.
func chaosEventsSchema() (*iceberg.Schema, iceberg.PartitionSpec) {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "seq", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "event_time", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
	)
	return sch, iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "event_day", Transform: iceberg.DayTransform{}})
}
