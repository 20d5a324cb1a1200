//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/catalogconfig"
)

// TestKafkaSinkEvolve streams, per format (Confluent-framed Avro with
// writer schemas from a directory, and JSON), a topic whose messages gain
// a field midway into a table with two `icerun sink -evolve` processes in
// one group, one partition each, so that both meet the new field at about
// the same time and race to add the column. A message that does not decode
// goes to the dead-letter table. The table ends with every row once, the
// new column once, null in the rows committed before it and the values in
// those after.
func TestKafkaSinkEvolve(t *testing.T) {
	brokers := os.Getenv("ICERUN_KAFKA_BROKERS")
	if brokers == "" {
		if required("kafka") {
			t.Fatal("target kafka is set but ICERUN_KAFKA_BROKERS is not")
		}
		t.Skip("no Kafka broker: run under scripts/integration kafka")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "icerun")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/icerun").CombinedOutput(); err != nil {
		t.Fatalf("build icerun: %v\n%s", err, out)
	}
	v1 := `{"type":"record","name":"Event","fields":[{"name":"id","type":"string"},{"name":"event_time","type":{"type":"long","logicalType":"timestamp-micros"}}]}`
	v2 := `{"type":"record","name":"Event","fields":[{"name":"id","type":"string"},{"name":"event_time","type":{"type":"long","logicalType":"timestamp-micros"}},{"name":"region","type":["null","string"]}]}`
	schemas := filepath.Join(dir, "schemas")
	if err := os.MkdirAll(schemas, 0o755); err != nil {
		t.Fatal(err)
	}
	for id, s := range map[int]string{1: v1, 2: v2} {
		if err := os.WriteFile(filepath.Join(schemas, fmt.Sprintf("%d.avsc", id)), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 7, 14, 12, 0, 0, 0, time.UTC)
	avroMsg := func(id string, region string) []byte {
		sch, sid, v := avro.MustParse(v1), uint32(1), map[string]any{"id": id, "event_time": at}
		if region != "" {
			sch, sid, v["region"] = avro.MustParse(v2), 2, region
		}
		datum, err := avro.Marshal(sch, v)
		if err != nil {
			t.Fatal(err)
		}
		out := []byte{0, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(out[1:], sid)
		return append(out, datum...)
	}
	jsonMsg := func(id string, region string) []byte {
		if region == "" {
			return []byte(fmt.Sprintf(`{"id":%q,"event_time":"2026-07-14T14:00:00+02:00"}`, id))
		}
		return []byte(fmt.Sprintf(`{"id":%q,"event_time":"2026-07-14T14:00:00+02:00","region":%q}`, id, region))
	}
	for _, tc := range []struct {
		name string
		args []string
		msg  func(id, region string) []byte
		bad  []byte
	}{
		{"avro", []string{"-format", "avro", "-avro-schemas", schemas}, avroMsg, []byte{0, 0, 0, 0, 9, 2}},
		{"json", nil, jsonMsg, []byte(`{"id":`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kafkaEvolve(t, bin, brokers, tc.args, tc.msg, tc.bad)
		})
	}
}

func kafkaEvolve(t *testing.T, bin, brokers string, format []string, msg func(id, region string) []byte, bad []byte) {
	ctx := context.Background()
	cat, wh, ident, topic, cl := eventsTopic(t, brokers, "evolve", 2)
	produce := func(recs ...*kgo.Record) {
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	const before, after = 20, 20
	var first []*kgo.Record
	for p := range int32(2) {
		for i := range before {
			first = append(first, &kgo.Record{Partition: p, Value: msg(fmt.Sprintf("p%d-old%d", p, i), "")})
		}
		first = append(first, &kgo.Record{Partition: p, Value: bad})
	}
	produce(first...)
	var sinks []*exec.Cmd
	var logs []*bytes.Buffer
	for range 2 {
		args := append([]string{"sink", "db.events", "-warehouse", wh, "-brokers", brokers, "-topic", topic,
			"-group", "g-" + topic, "-commit-interval", "200ms", "-evolve", "-dead-letter", "db.events_dead"}, format...)
		cmd := exec.Command(bin, args...)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sinks, logs = append(sinks, cmd), append(logs, &log)
	}
	defer func() {
		for _, c := range sinks {
			_ = c.Process.Kill()
		}
	}()
	wait := func(n int) {
		deadline := time.Now().Add(90 * time.Second)
		for time.Now().Before(deadline) && len(tableIDs(t, ident, wh)) < n {
			time.Sleep(300 * time.Millisecond)
		}
	}
	wait(2 * before)
	// Both partitions gain the field in one produce: each sink meets it.
	var second []*kgo.Record
	for p := range int32(2) {
		for i := range after {
			second = append(second, &kgo.Record{Partition: p, Value: msg(fmt.Sprintf("p%d-new%d", p, i), fmt.Sprintf("r%d", i))})
		}
	}
	produce(second...)
	wait(2 * (before + after))
	for i, c := range sinks {
		_ = c.Process.Signal(syscall.SIGTERM)
		if err := c.Wait(); err != nil {
			t.Errorf("sink %d: %v\n%s", i, err, tail(logs[i].String(), 3000))
		}
	}
	sinks = nil
	for i, l := range logs {
		t.Logf("sink %d: %s", i, tail(grepLines(l.String(), "schema change", "new fields", "resuming"), 1500))
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, f := range tbl.Schema().Fields() {
		cols = append(cols, f.Name+" "+f.Type.String())
	}
	if strings.Join(cols, ", ") != "id string, event_time timestamptz, region string" {
		t.Fatalf("columns %v", cols)
	}
	_, recs, err := tbl.Scan(icetable.WithSelectedFields("id", "region")).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	rows := 0
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		id, region := rec.Column(0).(*array.String), rec.Column(1).(*array.String)
		for i := 0; i < id.Len(); i++ {
			rows++
			got[id.Value(i)] = "<null>"
			if region.IsValid(i) {
				got[id.Value(i)] = region.Value(i)
			}
		}
		rec.Release()
	}
	if rows != 2*(before+after) || len(got) != rows {
		t.Errorf("%d rows, %d unique; want %d", rows, len(got), 2*(before+after))
	}
	for p := range 2 {
		for i := range before {
			if v := got[fmt.Sprintf("p%d-old%d", p, i)]; v != "<null>" {
				t.Errorf("p%d-old%d: region %q, want null", p, i, v)
			}
		}
		for i := range after {
			if v, w := got[fmt.Sprintf("p%d-new%d", p, i)], fmt.Sprintf("r%d", i); v != w {
				t.Errorf("p%d-new%d: region %q, want %q", p, i, v, w)
			}
		}
	}
	if dead := columnOf(t, icetable.Identifier{"db", "events_dead"}, wh, "_icerun_raw"); len(dead) != 2 {
		t.Errorf("dead letters %q, want the bad message of each partition", dead)
	}
}

// grepLines is the lines of s that contain one of subs.
func grepLines(s string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// eventsTopic creates, for a test of `icerun sink`, a warehouse with the
// table db.events (a required id string, event_time timestamptz) and a
// fresh topic of partitions partitions named after prefix, and returns the
// warehouse's catalog and folder, the table, the topic and a client
// producing to it by partition (closed with the test).
func eventsTopic(t *testing.T, brokers, prefix string, partitions int32) (catalog.Catalog, string, icetable.Identifier, string, *kgo.Client) {
	t.Helper()
	ctx := context.Background()
	wh := filepath.Join(t.TempDir(), "warehouse")
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
		iceberg.NestedField{ID: 2, Name: "event_time", Type: iceberg.PrimitiveTypes.TimestampTz},
	)
	if _, err := cat.CreateTable(ctx, ident, sch); err != nil {
		t.Fatal(err)
	}
	topic := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	createTopic(t, cl, topic, partitions)
	return cat, wh, ident, topic, cl
}
