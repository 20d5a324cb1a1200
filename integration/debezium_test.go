//go:build integration

package integration

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/sink/decode"
)

// dbzOrder is a row of the orders table as the test wrote it.
type dbzOrder struct {
	id       int64
	customer string
	status   string
	amount   string
	day      string
	updated  time.Time
}

// dbzChange is a change the test expects on the topic.
type dbzChange struct {
	op  decode.Op
	row dbzOrder
}

// TestDebezium captures an orders table of the pg target's PostgreSQL with
// Debezium's PostgreSQL connector in the debezium target's Kafka Connect
// worker (registered through Connect's REST API), makes inserts, updates
// (one of them changes order_day, the column a table would be partitioned
// by) and deletes, some in one transaction, and checks that the connector's
// messages decode with decode.DebeziumFormat to exactly the changes made,
// in order: the snapshot's rows as upserts, each statement's change with
// its after image (the key and placeholders for a delete), the tombstone after each
// delete skipped, and source.lsn increasing along the stream (so per key).
// A change delivered again (Connect redelivers after a restart) is
// recognized by its key, operation and LSN and counted once.
// ICERUN_DEBEZIUM_SCHEMAS=false makes the connector write bare payloads;
// ICERUN_DEBEZIUM_CAPTURE=DIR writes every message value into DIR (how
// sink/decode/testdata/debezium was made).
func TestDebezium(t *testing.T) {
	connectURL, pgURI, brokers := os.Getenv("ICERUN_CONNECT_URL"), os.Getenv("ICERUN_PG_URI"), os.Getenv("ICERUN_KAFKA_BROKERS")
	if connectURL == "" || pgURI == "" || brokers == "" {
		if required("debezium") {
			t.Fatal("target debezium is set but ICERUN_CONNECT_URL, ICERUN_PG_URI or ICERUN_KAFKA_BROKERS is not")
		}
		t.Skip("no Debezium: run under scripts/integration kafka pg debezium")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	db, err := sql.Open(pgDriver, pgURI)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	run := fmt.Sprintf("t%d", time.Now().UnixNano()%1e9)
	tbl := "orders_" + run
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE ` + tbl + ` (order_id bigint PRIMARY KEY, customer text NOT NULL, status text NOT NULL,
		amount numeric(10,2), order_day date NOT NULL, updated_at timestamptz NOT NULL)`)

	var want []dbzChange
	at := time.Date(2026, 7, 14, 10, 0, 0, 123456000, time.UTC)
	insert := func(op decode.Op, o dbzOrder) {
		at = at.Add(time.Minute)
		o.updated = at
		amount := sql.NullString{String: o.amount, Valid: o.amount != ""}
		exec(`INSERT INTO `+tbl+` VALUES ($1, $2, $3, $4::numeric, $5::date, $6)`, o.id, o.customer, o.status, amount, o.day, o.updated)
		want = append(want, dbzChange{op, o})
	}
	rows := map[int64]dbzOrder{}
	update := func(tx *sql.Tx, id int64, set func(*dbzOrder)) {
		t.Helper()
		o := rows[id]
		set(&o)
		at = at.Add(time.Minute)
		o.updated = at
		if _, err := tx.ExecContext(ctx, `UPDATE `+tbl+` SET status = $2, order_day = $3::date, updated_at = $4 WHERE order_id = $1`,
			id, o.status, o.day, o.updated); err != nil {
			t.Fatal(err)
		}
		rows[id] = o
		want = append(want, dbzChange{decode.Upsert, o})
	}
	del := func(tx *sql.Tx, id int64) {
		t.Helper()
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+tbl+` WHERE order_id = $1`, id); err != nil {
			t.Fatal(err)
		}
		delete(rows, id)
		// Debezium's before image of a delete under the default replica
		// identity: the key, the zero of each NOT NULL column, null for
		// the others.
		want = append(want, dbzChange{decode.Delete, dbzOrder{id: id, day: "1970-01-01", updated: time.Unix(0, 0).UTC()}})
	}
	inTx := func(f func(tx *sql.Tx)) {
		t.Helper()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		f(tx)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	add := func(op decode.Op, o dbzOrder) { insert(op, o); rows[o.id] = want[len(want)-1].row }

	// Two rows before the connector: its snapshot reads them (op "r").
	add(decode.Upsert, dbzOrder{id: 1, customer: "ada", status: "created", amount: "12.50", day: "2026-07-14"})
	add(decode.Upsert, dbzOrder{id: 2, customer: "bob", status: "created", amount: "99.99", day: "2026-07-14"})

	topic := startConnector(ctx, t, connectURL, pgURI, tbl, run)

	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var values [][]byte
	poll := func(done func() bool) {
		t.Helper()
		for !done() {
			pctx, pcancel := context.WithTimeout(ctx, 2*time.Minute)
			fs := cl.PollFetches(pctx)
			expired := pctx.Err() != nil
			pcancel()
			if expired {
				t.Fatalf("%d messages on %s, and no more for 2 minutes", len(values), topic)
			}
			fs.EachError(func(_ string, _ int32, err error) { t.Logf("fetch: %v", err) })
			fs.EachRecord(func(r *kgo.Record) { values = append(values, r.Value) })
		}
	}
	atLeast := func(n int) func() bool { return func() bool { return len(values) >= n } }
	poll(atLeast(2)) // the snapshot is done: what follows is streamed

	insert(decode.Upsert, dbzOrder{id: 3, customer: "cy", status: "created", amount: "5.00", day: "2026-07-15"})
	rows[3] = want[len(want)-1].row
	insert(decode.Upsert, dbzOrder{id: 4, customer: "di", status: "created", amount: "", day: "2026-07-15"})
	rows[4] = want[len(want)-1].row
	inTx(func(tx *sql.Tx) { update(tx, 1, func(o *dbzOrder) { o.status = "paid" }) })
	// order_day is the partition source column of a table partitioned by day.
	inTx(func(tx *sql.Tx) { update(tx, 3, func(o *dbzOrder) { o.day = "2026-07-13"; o.status = "paid" }) })
	inTx(func(tx *sql.Tx) {
		update(tx, 2, func(o *dbzOrder) { o.status = "shipped" })
		del(tx, 4)
	})
	inTx(func(tx *sql.Tx) { update(tx, 1, func(o *dbzOrder) { o.status = "shipped" }) })
	inTx(func(tx *sql.Tx) { del(tx, 1) })
	insert(decode.Upsert, dbzOrder{id: 5, customer: "ed", status: "created", amount: "1.05", day: "2026-07-16"})

	deletes := 0
	for _, c := range want {
		if c.op == decode.Delete {
			deletes++
		}
	}
	poll(func() bool { // the last insert, after the tombstones of the deletes before it
		n := len(values)
		return n > 0 && bytes.Contains(values[n-1], []byte(`"order_id":5,`)) && bytes.Contains(values[n-1], []byte(`"op":"c"`))
	})
	if dir := os.Getenv("ICERUN_DEBEZIUM_CAPTURE"); dir != "" {
		for i, v := range values {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d.json", i)), v, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "customer", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "status", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 4, Name: "amount", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: 5, Name: "order_day", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 6, Name: "updated_at", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
	)
	sc, err := icetable.SchemaToArrowSchema(sch, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := decode.DebeziumFormat()(sc, false)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dec(values)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Rows.Release()
	if len(d.Bad) > 0 {
		t.Fatalf("rejected: %+v", d.Bad)
	}
	all := dbzRows(d)
	// A change delivered again has the key, operation and LSN of its
	// first delivery: keep the first ones.
	var got []dbzOrder
	var changes []decode.Change
	seen := map[string]bool{}
	for i, c := range d.Changes {
		id := fmt.Sprint(c.Op, all[i].id, c.Order[0])
		if !seen[id] {
			seen[id] = true
			got, changes = append(got, all[i]), append(changes, c)
		}
	}
	if len(changes) != len(want) || len(d.Skipped) < deletes {
		t.Fatalf("%d distinct changes, %d skipped; want %d, at least %d", len(changes), len(d.Skipped), len(want), deletes)
	}
	for i, w := range want {
		if changes[i].Op != w.op || got[i] != w.row {
			t.Errorf("change %d = %v %+v, want %v %+v", i, changes[i].Op, got[i], w.op, w.row)
		}
	}
	// The tombstones come right after their deletes.
	row := 0
	for i := range values {
		if len(values[i]) == 0 {
			if row == 0 || d.Changes[row-1].Op != decode.Delete {
				t.Errorf("message %d: a tombstone not after a delete", i)
			}
			continue
		}
		row++
	}
	// The snapshot's rows share its LSN; the stream's increase.
	for i := 1; i < len(changes); i++ {
		prev, cur := changes[i-1].Order, changes[i].Order
		if len(cur) != 2 || cur[0] <= 0 || cur[1] <= 0 {
			t.Fatalf("change %d: order %v, want source.lsn and source.ts_ms", i, cur)
		}
		if i == 1 && cur[0] != prev[0] {
			t.Errorf("snapshot rows at LSNs %d and %d, want one", prev[0], cur[0])
		}
		if i >= 2 && cur[0] <= prev[0] {
			t.Errorf("change %d at LSN %d after %d, want greater", i, cur[0], prev[0])
		}
	}
	t.Logf("%d messages (%d tombstones) decoded to %d changes (%d delivered again), LSNs %d..%d",
		len(values), len(d.Skipped), len(changes), len(d.Changes)-len(changes), changes[0].Order[0], changes[len(changes)-1].Order[0])
}

// dbzRows reads the decoded rows; a null column reads as its zero value.
func dbzRows(d decode.Decoded) []dbzOrder {
	r := d.Rows
	ids := r.Column(0).(*array.Int64)
	cust, status := r.Column(1).(*array.String), r.Column(2).(*array.String)
	amount, day, ts := r.Column(3).(*array.Decimal128), r.Column(4).(*array.Date32), r.Column(5).(*array.Timestamp)
	out := make([]dbzOrder, r.NumRows())
	for i := range out {
		o := dbzOrder{id: ids.Value(i)}
		if cust.IsValid(i) {
			o.customer = cust.Value(i)
		}
		if status.IsValid(i) {
			o.status = status.Value(i)
		}
		if amount.IsValid(i) {
			o.amount = amount.Value(i).ToString(amount.DataType().(*arrow.Decimal128Type).Scale)
		}
		if day.IsValid(i) {
			o.day = day.Value(i).FormattedString()
		}
		if ts.IsValid(i) {
			o.updated = time.UnixMicro(int64(ts.Value(i))).UTC()
		}
		out[i] = o
	}
	return out
}

// registerDebezium registers Debezium's PostgreSQL connector for table
// (schema.table) of the database of pgURI through Connect's REST API, with
// its own replication slot and publication, and waits until its task runs.
// startConnector registers a Debezium connector of run for the
// PostgreSQL table tbl (schema public), deleted when the test ends, and
// returns the topic of its changes.
func startConnector(ctx context.Context, t *testing.T, connectURL, pgURI, tbl, run string) string {
	t.Helper()
	prefix := os.Getenv("ICERUN_DEBEZIUM_TOPIC_PREFIX") + "_" + run
	name := "orders-" + run
	registerDebezium(ctx, t, connectURL, name, pgURI, prefix, "public."+tbl, run)
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, connectURL+"/connectors/"+name, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	return prefix + ".public." + tbl
}

func registerDebezium(ctx context.Context, t *testing.T, connectURL, name, pgURI, prefix, table, run string) {
	t.Helper()
	u, err := url.Parse(pgURI)
	if err != nil {
		t.Fatal(err)
	}
	pass, _ := u.User.Password()
	cfg := map[string]string{
		"connector.class":             "io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname":           u.Hostname(),
		"database.port":               u.Port(),
		"database.user":               u.User.Username(),
		"database.password":           pass,
		"database.dbname":             strings.TrimPrefix(u.Path, "/"),
		"topic.prefix":                prefix,
		"plugin.name":                 "pgoutput",
		"slot.name":                   "icerun_" + run,
		"publication.name":            "icerun_" + run,
		"publication.autocreate.mode": "filtered",
		"table.include.list":          table,
		"decimal.handling.mode":       "string",
		"snapshot.mode":               "initial",
		"topic.creation.default.replication.factor": "1",
		"topic.creation.default.partitions":         "1",
	}
	if os.Getenv("ICERUN_DEBEZIUM_SCHEMAS") == "false" {
		cfg["value.converter"] = "org.apache.kafka.connect.json.JsonConverter"
		cfg["value.converter.schemas.enable"] = "false"
	}
	body, _ := json.Marshal(map[string]any{"name": name, "config": cfg})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, connectURL+"/connectors", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /connectors: %s: %s", resp.Status, msg)
	}
	waitConnector(ctx, t, connectURL, name)
}

// waitConnector waits until connector name and its one task run.
func waitConnector(ctx context.Context, t *testing.T, connectURL, name string) {
	t.Helper()
	var last []byte
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, connectURL+"/connectors/"+name+"/status", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		last, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		var st struct {
			Connector struct{ State string } `json:"connector"`
			Tasks     []struct {
				State string
				Trace string
			} `json:"tasks"`
		}
		if json.Unmarshal(last, &st) != nil {
			continue
		}
		for _, task := range st.Tasks {
			if task.State == "FAILED" {
				t.Fatalf("connector %s: task failed: %s", name, task.Trace)
			}
		}
		if st.Connector.State == "RUNNING" && len(st.Tasks) == 1 && st.Tasks[0].State == "RUNNING" {
			return
		}
	}
	t.Fatalf("connector %s not running after 2 minutes: %s", name, last)
}
