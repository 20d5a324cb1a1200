package main

import (
	"encoding/json"
	"testing"
	"time"
)

func TestPositionsReached(t *testing.T) {
	end := map[int32]int64{0: 10, 1: 5}
	for _, tc := range []struct {
		pos  string
		want bool
	}{
		{`{"kafka:t": {"0": {"offset": 9}, "1": {"offset": 4}}}`, true},
		{`{"kafka:t": {"0": {"offset": 12}, "1": {"offset": 4, "max_event_time": 1}}}`, true},
		{`{"kafka:t": {"0": {"offset": 9}, "1": {"offset": 3}}}`, false},
		{`{"kafka:t": {"0": {"offset": 9}}}`, false},
		{`{"kafka:t": {"0": {"offset": 9}, "1": {}}}`, false},
		{`{"kafka:u": {"0": {"offset": 9}, "1": {"offset": 4}}}`, false},
		{``, false},
		{`not json`, false},
	} {
		if got := positionsReached(tc.pos, "t", end); got != tc.want {
			t.Errorf("positionsReached(%s) = %v, want %v", tc.pos, got, tc.want)
		}
	}
}

// The message of a change decodes to its row, updated_at with its
// microseconds.
func TestChangeJSON(t *testing.T) {
	r := row{orderID: 42, version: 7, amount: 1234, status: "shipped", updatedAt: upsertEpoch.UnixMicro() + 1400}
	var got map[string]any
	if err := json.Unmarshal(changeJSON(r), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"order_id": 42.0, "version": 7.0, "amount": 1234.0, "status": "shipped", "updated_at": "2026-07-14T00:00:00.001400Z"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("fields %v, want %v", got, want)
	}
}

func TestDrainRequest(t *testing.T) {
	cfg := upsertPeersConfig{brokers: "127.0.0.1:9092", maxOffsets: 5000, timeout: time.Hour}
	b, err := json.Marshal(drainRequest(cfg, "/w", "/c", "t", map[int32]int64{0: 10, 3: 7}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"op":"drain","dir":"/w","brokers":"127.0.0.1:9092","topic":"t","max_offsets":5000,"end_offsets":{"0":10,"3":7},"checkpoint":"/c","timeout_secs":3600}`
	if string(b) != want {
		t.Errorf("request %s, want %s", b, want)
	}
	b, _ = json.Marshal(sparkDrainRequest{Op: "scan", Dir: "/w"})
	if string(b) != `{"op":"scan","dir":"/w"}` {
		t.Errorf("scan request %s", b)
	}
}

func TestParseSparkResult(t *testing.T) {
	out := []byte("a log line\n{\"startup\": 30.5, \"drain\": 80.25, \"cpu\": 100, \"batches\": 40, \"rows\": 200000}\n")
	r, err := parseSparkResult(out)
	if err != nil {
		t.Fatal(err)
	}
	if r != (sparkResult{Startup: 30.5, Drain: 80.25, CPU: 100, Batches: 40, Rows: 200000}) {
		t.Errorf("result %+v", r)
	}
	if _, err := parseSparkResult([]byte("Traceback ...\n")); err == nil {
		t.Error("no error for output without a result line")
	}
}

func TestCheckUpsertPeers(t *testing.T) {
	ok := upsertPeersConfig{brokers: "b", keys: timeOrdered, rows: 1, changes: 1, maxOffsets: 1, partitions: 1, interval: time.Second, systems: []string{"icerun", "spark"}}
	if err := checkUpsertPeers(ok); err != nil {
		t.Fatal(err)
	}
	for _, f := range []func(*upsertPeersConfig){
		func(c *upsertPeersConfig) { c.brokers = "" },
		func(c *upsertPeersConfig) { c.keys = "both" },
		func(c *upsertPeersConfig) { c.changes = 0 },
		func(c *upsertPeersConfig) { c.systems = []string{"flink"} },
	} {
		c := ok
		f(&c)
		if err := checkUpsertPeers(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
