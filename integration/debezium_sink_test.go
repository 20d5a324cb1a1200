//go:build integration

package integration

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/sink"
)

// TestDebeziumSink runs the whole pipeline: an orders table of the pg
// target's PostgreSQL, captured by Debezium's PostgreSQL connector into
// Kafka, kept by `icerun sink -format debezium -upsert id` (the built
// binary) in an Iceberg table partitioned by order_day on the embedded
// SQLite catalog (one warehouse for both subtests, a table each).
// Inserts, updates (some change order_day, the partition source column),
// deletes, a key deleted and inserted again, and a
// transaction of several; the sink is SIGKILLed while changes flow and
// restarted while more are made, then the Kafka Connect worker is
// SIGKILLed and restarted amid more changes (ICERUN_DEBEZIUM_RESTART: the
// connector resumes from its flushed offsets and delivers again what
// follows them), then the broker (ICERUN_KAFKA_RESTART). At the end the
// Iceberg table equals the PostgreSQL table row for row, read by icerun,
// and by Spark and PyIceberg (debeziumEngines) in full and filtered.
func TestDebeziumSink(t *testing.T) {
	// One warehouse: the engines know the embedded catalog by its name,
	// and Spark keeps a catalog by name for the life of its session.
	wh := filepath.Join(t.TempDir(), "warehouse")
	for _, mode := range []string{"copy-on-write", "merge-on-read"} {
		t.Run(mode, func(t *testing.T) {
			debeziumSink(t, wh, iceberg.Properties{"write.upsert.mode": mode, "write.merge.mode": mode,
				"write.update.mode": mode, "write.delete.mode": mode})
		})
	}
}

// debeziumSink runs the proof on a new table in the warehouse wh, with
// the write-mode properties props.
func debeziumSink(t *testing.T, wh string, props iceberg.Properties) {
	connectURL, pgURI, brokers := os.Getenv("ICERUN_CONNECT_URL"), os.Getenv("ICERUN_PG_URI"), os.Getenv("ICERUN_KAFKA_BROKERS")
	if connectURL == "" || pgURI == "" || brokers == "" {
		if required("debezium") {
			t.Fatal("target debezium is set but ICERUN_CONNECT_URL, ICERUN_PG_URI or ICERUN_KAFKA_BROKERS is not")
		}
		t.Skip("no Debezium: run under scripts/integration kafka pg debezium")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "icerun")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/icerun").CombinedOutput(); err != nil {
		t.Fatalf("build icerun: %v\n%s", err, out)
	}
	db, err := sql.Open(pgDriver, pgURI)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	run := fmt.Sprintf("s%d", time.Now().UnixNano()%1e9)
	tbl := "orders_" + run
	exec1 := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec1(`CREATE TABLE ` + tbl + ` (id bigint PRIMARY KEY, customer text NOT NULL, status text NOT NULL, order_day date NOT NULL)`)
	insert := func(id int, day string) {
		exec1(`INSERT INTO `+tbl+` VALUES ($1, $2, 'created', $3::date)`, id, fmt.Sprintf("c%d", id), day)
	}
	for id := 1; id <= 5; id++ { // read by the connector's snapshot
		insert(id, "2026-07-14")
	}

	cat, err := catalogconfig.OpenLocal(ctx, wh)
	if err != nil {
		t.Fatal(err)
	}
	ident := icetable.Identifier{"db", tbl}
	if err := cat.CreateNamespace(ctx, icetable.Identifier{"db"}, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		t.Fatal(err)
	}
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "customer", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "status", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "order_day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 5, Name: "_cdc_op", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 6, Name: "_cdc_lsn", Type: iceberg.PrimitiveTypes.Int64},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{4}, FieldID: 1000, Name: "day", Transform: iceberg.IdentityTransform{}})
	if _, err := cat.CreateTable(ctx, ident, sch, catalog.WithPartitionSpec(&spec), catalog.WithProperties(props)); err != nil {
		t.Fatal(err)
	}
	if c, ok := cat.(interface{ Close() error }); ok {
		c.Close()
	}

	topic := startConnector(ctx, t, connectURL, pgURI, tbl, run)
	// The topic exists once the snapshot's rows are on it.
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 5; {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Minute)
		fs := cl.PollFetches(pctx)
		expired := pctx.Err() != nil
		pcancel()
		if expired {
			t.Fatalf("%d snapshot messages on %s, and no more for 2 minutes", n, topic)
		}
		n += fs.NumRecords()
	}
	cl.Close()

	var logs []*bytes.Buffer
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "sink", "db."+tbl, "-warehouse", wh, "-brokers", brokers, "-topic", topic,
			"-group", "g-"+run, "-format", "debezium", "-upsert", "id", "-commit-interval", "200ms")
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		logs = append(logs, &log)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	// pgRows are the rows where holds (an SQL predicate, "" for all), as
	// icebergRows writes them.
	pgRows := func(where string) []string {
		if where != "" {
			where = " WHERE " + where
		}
		rs, err := db.QueryContext(ctx, `SELECT id, customer, status, order_day::text FROM `+tbl+where+` ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		var out []string
		for rs.Next() {
			var id int64
			var c, s, d string
			if err := rs.Scan(&id, &c, &s, &d); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%d %s %s %s", id, c, s, d))
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	proc := start()
	defer func() {
		if proc != nil {
			_ = proc.Process.Kill()
			_ = proc.Wait()
		}
	}()

	// The sink consumes: the snapshot's rows landed.
	for deadline := time.Now().Add(2 * time.Minute); len(icebergRows(t, wh, ident)) < 5; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the snapshot's rows did not land in 2 minutes:\n%s", tail(logs[0].String(), 3000))
		}
	}
	// While the sink runs: inserts and updates, killed amid them.
	for id := 6; id <= 30; id++ {
		insert(id, "2026-07-15")
	}
	// Some inserts landed: the updates are killed in flight.
	for deadline := time.Now().Add(time.Minute); len(icebergRows(t, wh, ident)) <= 5; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no insert landed in a minute:\n%s", tail(logs[0].String(), 3000))
		}
	}
	for id := 1; id <= 15; id++ {
		exec1(`UPDATE `+tbl+` SET status = 'paid' WHERE id = $1`, id)
	}
	held := len(icebergRows(t, wh, ident))
	if err := proc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = proc.Wait()
	proc = nil
	t.Logf("SIGKILLed the sink amid the changes, with %d of 30 rows in the table", held)

	// While it is down: partition moves, deletes, a transaction.
	for id := 3; id <= 10; id++ {
		exec1(`UPDATE `+tbl+` SET order_day = order_day + 1, status = 'moved' WHERE id = $1`, id)
	}
	for id := 11; id <= 14; id++ {
		exec1(`DELETE FROM `+tbl+` WHERE id = $1`, id)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE ` + tbl + ` SET status = 'shipped' WHERE id = 20`,
		`DELETE FROM ` + tbl + ` WHERE id = 21`,
		`INSERT INTO ` + tbl + ` VALUES (31, 'c31', 'created', '2026-07-16')`,
		`UPDATE ` + tbl + ` SET status = 'shipped', order_day = '2026-07-17' WHERE id = 31`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	proc = start()
	// After the restart: more of each, Connect SIGKILLed and restarted
	// amid them (it redelivers what follows its last flushed offsets),
	// then the broker, and a deleted key inserted again.
	for id := 32; id <= 36; id++ {
		insert(id, "2026-07-16")
	}
	restartConnect(ctx, t, connectURL, "orders-"+run)
	for id := 37; id <= 40; id++ {
		insert(id, "2026-07-16")
	}
	exec1(`DELETE FROM ` + tbl + ` WHERE id = 1`)
	exec1(`UPDATE ` + tbl + ` SET status = 'refunded' WHERE id = 2`)
	restartBroker(t)
	exec1(`INSERT INTO ` + tbl + ` VALUES (11, 'c11', 'again', '2026-07-18')`)
	exec1(`UPDATE ` + tbl + ` SET order_day = '2026-07-14' WHERE id = 32`)
	exec1(`DELETE FROM ` + tbl + ` WHERE id = 40`) // the stream ends with its tombstone
	last := lastOffset(ctx, t, brokers, topic)

	want := pgRows("")
	filtered := map[string][]string{}
	for _, f := range debeziumFilters {
		filtered[f] = pgRows(f)
	}
	var got []string
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if got = icebergRows(t, wh, ident); slices.Equal(got, want) {
			break
		}
	}
	if err := proc.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	werr := proc.Wait()
	proc = nil
	if werr != nil {
		t.Errorf("sink after SIGTERM: %v\n%s", werr, tail(logs[len(logs)-1].String(), 3000))
	}
	got = icebergRows(t, wh, ident)
	if !slices.Equal(got, want) {
		for _, l := range logs {
			t.Logf("sink log:\n%s", tail(l.String(), 3000))
		}
		t.Fatalf("Iceberg table (%d rows):\n%s\nPostgreSQL table (%d rows):\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	// The position covers the last message, the tombstone after the
	// delete of 40: passed without a row, so nothing is redelivered.
	cat2, err := catalogconfig.OpenLocal(ctx, wh)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := cat2.(interface{ Close() error }); ok {
		defer c.Close()
	}
	loaded, err := cat2.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	pos, err := sink.Positions(loaded)
	if err != nil || pos[sink.SourcePartition{Source: "kafka:" + topic}] != last {
		t.Errorf("positions = %v, %v; want kafka:%s/0 at %d (the last tombstone)", pos, err, topic, last)
	}
	// The write mode is the one asked for: merge-on-read commits delete
	// files (later compacted away, so the history is read, not the
	// current snapshot); copy-on-write never does.
	var deleteFiles int
	for _, sn := range loaded.Metadata().Snapshots() {
		if sn.Summary != nil {
			n, _ := strconv.Atoi(sn.Summary.Properties["added-delete-files"])
			deleteFiles += n
		}
	}
	if mor := props["write.upsert.mode"] == "merge-on-read"; mor != (deleteFiles > 0) {
		t.Errorf("%s table: %d delete files added over its history", props["write.upsert.mode"], deleteFiles)
	}
	t.Logf("Iceberg table equals PostgreSQL's: %d rows; position at offset %d, the last tombstone; %d delete files added", len(got), last, deleteFiles)
	t.Run("spark+pyiceberg", func(t *testing.T) { debeziumEngines(t, wh, ident, want, filtered) })
}

// lastOffset waits for the tombstone after the delete of id 40 on topic
// (partition 0) and returns its offset.
func lastOffset(ctx context.Context, t *testing.T, brokers, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var deleted bool
	for {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Minute)
		fs := cl.PollFetches(pctx)
		expired := pctx.Err() != nil
		pcancel()
		if expired {
			t.Fatalf("no tombstone after the delete of 40 on %s in 2 minutes", topic)
		}
		for it := fs.RecordIter(); !it.Done(); {
			r := it.Next()
			if deleted && len(r.Value) == 0 {
				return r.Offset
			}
			deleted = bytes.Contains(r.Value, []byte(`"op":"d"`)) && bytes.Contains(r.Value, []byte(`"id":40,`))
		}
	}
}

// icebergRows are the rows of the orders table of TestDebeziumSink as
// "id customer status order_day", by id.
func icebergRows(t *testing.T, wh string, ident icetable.Identifier) []string {
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
	if err != nil {
		t.Fatal(err)
	}
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	_, recs, err := tbl.Scan(icetable.WithSelectedFields("id", "customer", "status", "order_day")).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		id   int64
		text string
	}
	var rows []row
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		idx := func(name string) int { return rec.Schema().FieldIndices(name)[0] }
		id, c, s, d := idx("id"), idx("customer"), idx("status"), idx("order_day")
		for i := 0; i < int(rec.NumRows()); i++ {
			var n int64
			fmt.Sscan(rec.Column(id).ValueStr(i), &n)
			rows = append(rows, row{n, fmt.Sprintf("%d %s %s %s", n, rec.Column(c).ValueStr(i), rec.Column(s).ValueStr(i), rec.Column(d).ValueStr(i))})
		}
		rec.Release()
	}
	slices.SortFunc(rows, func(a, b row) int { return int(a.id - b.id) })
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.text
	}
	return out
}
