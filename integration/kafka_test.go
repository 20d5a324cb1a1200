//go:build integration

package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/icerun/icerun/catalogconfig"
)

// TestKafkaSinkChaos streams a 3-partition topic into a table with two
// `icerun sink` processes in one consumer group, SIGKILLs them at random
// instants and restarts them while the producer sends more (every message
// of a killed sink that was not committed is delivered again), and 1% of
// the messages are produced twice with new offsets, the second time to
// another partition (another sink's, often). Half the messages carry their
// event time as RFC 3339 text, half as microseconds; 0.5% of the records
// are not rows of the table (bad JSON, a wrong type, a required field
// missing) and go to the dead-letter table. The table must end with
// exactly the unique messages and the dead-letter table with every bad
// record once, checked row by row.
//
// Scale: ICERUN_KAFKA_MESSAGES (default 20,000), ICERUN_KAFKA_KILLS
// (default 4).
func TestKafkaSinkChaos(t *testing.T) {
	t.Run("keyed", func(t *testing.T) { kafkaChaos(t, true) })
	t.Run("positions", func(t *testing.T) { kafkaChaos(t, false) })
}

// kafkaChaos runs the chaos scenario. keyed: the sinks dedupe by id and
// the table must hold every unique message once; otherwise every record
// delivered (a producer's duplicate too) once.
func kafkaChaos(t *testing.T, keyed bool) {
	brokers := os.Getenv("ICERUN_KAFKA_BROKERS")
	if brokers == "" {
		if strings.Contains(os.Getenv("ICERUN_TARGETS"), "kafka") {
			t.Fatal("target kafka is set but ICERUN_KAFKA_BROKERS is not")
		}
		t.Skip("no Kafka broker: run under scripts/integration kafka")
	}
	total := envInt("ICERUN_KAFKA_MESSAGES", 20_000)
	kills := envInt("ICERUN_KAFKA_KILLS", 4)
	ctx := context.Background()
	dir := t.TempDir()
	bin := filepath.Join(dir, "icerun")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/icerun").CombinedOutput(); err != nil {
		t.Fatalf("build icerun: %v\n%s", err, out)
	}
	wh := filepath.Join(dir, "warehouse")
	cat, err := catalogconfig.OpenLocal(ctx, wh)
	if err != nil {
		t.Fatal(err)
	}
	ident := icetable.Identifier{"db", "events"}
	if err := cat.CreateNamespace(ctx, icetable.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "seq", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "event_time", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "event_day", Transform: iceberg.DayTransform{}})
	if _, err := cat.CreateTable(ctx, ident, sch, catalog.WithPartitionSpec(&spec)); err != nil {
		t.Fatal(err)
	}
	topic := fmt.Sprintf("events-%d", time.Now().UnixNano())
	// Records name their partition: a producer's duplicate goes to the
	// partition after its first copy's.
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	createTopic(t, cl, topic, 3)

	// The sinks: restartable processes.
	type proc struct {
		cmd *exec.Cmd
		log *bytes.Buffer
	}
	start := func(i int) *proc {
		args := []string{"sink", "db.events", "-warehouse", wh, "-brokers", brokers, "-topic", topic,
			"-group", "g-" + topic, "-commit-rows", "500", "-commit-interval", "300ms", "-session-timeout", "6s",
			"-dead-letter", "db.events_dead"}
		if keyed {
			args = append(args, "-key", "id")
		}
		cmd := exec.Command(bin, args...)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return &proc{cmd: cmd, log: &log}
	}
	procs := []*proc{start(0), start(1)}
	defer func() {
		for _, p := range procs {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	}()

	// The producer: unique ids, 1% sent twice (a producer retry: new
	// offset, another partition), 0.5% bad records.
	unique := map[string]int{} // id -> records produced
	bad := map[string]bool{}   // bad record values
	produced, records := 0, 0
	produce := func(n int) {
		var recs []*kgo.Record
		for range n {
			id := "m" + strconv.Itoa(produced)
			part := int32(produced % 3)
			at := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC).Add(time.Duration(produced)*time.Second + time.Duration(produced%1000)*time.Microsecond)
			v := fmt.Sprintf(`{"id":%q,"seq":%d,"event_time":%d}`, id, produced, at.UnixMicro())
			if produced%2 == 0 {
				v = fmt.Sprintf(`{"id":%q,"seq":%d,"event_time":%q}`, id, produced, at.In(time.FixedZone("", 2*3600)).Format(time.RFC3339Nano))
			}
			recs = append(recs, &kgo.Record{Key: []byte(id), Value: []byte(v), Partition: part})
			unique[id] = 1
			if rand.IntN(100) == 0 {
				recs = append(recs, &kgo.Record{Key: []byte(id), Value: []byte(v), Partition: (part + 1) % 3})
				unique[id] = 2
			}
			if rand.IntN(200) == 0 {
				b := []string{`{"id":"b%d"`, `{"id":"b%d","seq":"x","event_time":0}`, `{"seq":%d,"event_time":0}`}[len(bad)%3]
				b = fmt.Sprintf(b, len(bad))
				bad[b] = true
				recs = append(recs, &kgo.Record{Value: []byte(b), Partition: part})
			}
			produced++
		}
		records += len(recs)
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	step := total / (kills + 1)
	for k := 0; k <= kills; k++ {
		produce(step)
		if k == kills {
			break
		}
		time.Sleep(time.Duration(200+rand.IntN(1500)) * time.Millisecond)
		i := rand.IntN(len(procs))
		_ = procs[i].cmd.Process.Signal(syscall.SIGKILL)
		_ = procs[i].cmd.Wait()
		t.Logf("killed sink %d after %d messages", i, produced)
		procs[i] = start(i)
	}
	// Wait until the table holds every unique message, then stop the
	// sinks gracefully.
	deadline := time.Now().Add(90 * time.Second)
	var got []string
	deadIdent := icetable.Identifier{"db", "events_dead"}
	var dead []string
	for time.Now().Before(deadline) {
		got = tableIDs(t, ident, wh)
		dead = columnOf(t, deadIdent, wh, "_icerun_raw")
		if len(got) >= len(unique) && (keyed || len(got) >= records-len(bad)) && len(dead) >= len(bad) {
			break
		}
		time.Sleep(time.Second)
	}
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for i, p := range procs {
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("sink %d: %v\n%s", i, err, tail(p.log.String(), 2000))
		}
	}
	procs = nil
	got = tableIDs(t, ident, wh)
	have := map[string]int{}
	for _, id := range got {
		have[id]++
	}
	dead = columnOf(t, deadIdent, wh, "_icerun_raw")
	deadCount := map[string]int{}
	for _, v := range dead {
		deadCount[v]++
	}
	for v := range bad {
		if deadCount[v] != 1 {
			t.Errorf("bad record %s is %d times in the dead-letter table, want once", v, deadCount[v])
		}
		delete(deadCount, v)
	}
	if len(deadCount) != 0 {
		t.Errorf("dead-letter table holds unknown records: %v", deadCount)
	}
	t.Logf("%d bad records, %d dead letters", len(bad), len(dead))
	missing, dup, want := 0, 0, 0
	for id, n := range unique {
		if keyed {
			n = 1
		}
		want += n
		switch h := have[id]; {
		case h < n:
			missing += n - h
		case h > n:
			dup += h - n
		}
		delete(have, id)
	}
	t.Logf("keyed=%v: produced %d unique messages (%d records), table holds %d rows for %d expected: %d missing, %d duplicated, %d unknown",
		keyed, len(unique), records, len(got), want, missing, dup, len(have))
	if missing != 0 || dup != 0 || len(have) != 0 || len(got) != want {
		t.Errorf("table differs: %d missing, %d duplicated, %d unknown ids, %d rows for %d expected", missing, dup, len(have), len(got), want)
	}
}

func envInt(k string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
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

// tableIDs reads the id of every row of the table, sorted, through a
// catalog of its own (the sinks write through theirs).
func tableIDs(t *testing.T, ident icetable.Identifier, wh string) []string {
	t.Helper()
	return columnOf(t, ident, wh, "id")
}

// columnOf reads a string or binary column of every row of the table (none
// when it does not exist), sorted.
func columnOf(t *testing.T, ident icetable.Identifier, wh, column string) []string {
	t.Helper()
	ctx := context.Background()
	cat, err := catalogconfig.OpenLocal(ctx, wh)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := cat.(interface{ Close() error }); ok {
		defer c.Close()
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	_, recs, err := tbl.Scan(icetable.WithSelectedFields(column)).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		switch col := rec.Column(0).(type) {
		case *array.String:
			for i := 0; i < col.Len(); i++ {
				out = append(out, col.Value(i))
			}
		case *array.Binary:
			for i := 0; i < col.Len(); i++ {
				out = append(out, string(col.Value(i)))
			}
		}
		rec.Release()
	}
	slices.Sort(out)
	return out
}
