package main

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// measuresSchema is a table with columns keyed mode does not take.
const measuresSchema = `{"type": "struct", "fields": [
	{"id": 1, "name": "id", "type": "string", "required": false},
	{"id": 2, "name": "amount", "type": "double", "required": false},
	{"id": 3, "name": "tags", "type": {"type": "list", "element-id": 4, "element": "string", "element-required": false}, "required": false}]}`

// unreachable is a broker address nothing listens on.
const unreachable = "127.0.0.1:1"

// Brokers that cannot be reached are named in a warning, then, at
// -connect-timeout, the sink exits 75 (transient). A key that keyed mode
// takes is accepted at the start.
func TestSinkConnectTimeout(t *testing.T) {
	wh := warehouse(t)
	start := time.Now()
	code, _, errs := icerun("sink", "db.fact_orders", "-warehouse", wh, "-brokers", unreachable, "-topic", "t", "-group", "g", "-key", "order_id,event_date", "-connect-timeout", "2s")
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("icerun sink gave up after %s, want about 2s", took)
	}
	if code != exitRetry {
		t.Fatalf("icerun sink -brokers %s = %d, want %d\n%s", unreachable, code, exitRetry, errs)
	}
	for _, want := range []string{
		"level=WARN", "kafka sink: not connected: brokers " + unreachable + " unreachable",
		"icerun sink: kafka: not connected: brokers " + unreachable + " unreachable", "gave up after 2s", "-connect-timeout", "(transient: exit 75, run it again)",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

func TestSinkUsage(t *testing.T) {
	wh := warehouse(t)
	code, _, errs := icerun("create", "db.measures", "-warehouse", wh, "-schema", measuresSchema)
	if code != 0 {
		t.Fatal(errs)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sink", "-h"}, 0, "-brokers"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh}, 2, "-brokers, -group and one of -topic and -topic-regex are required"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-format", "avro"}, 2, "needs one of -avro-schemas"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-format", "xml"}, 2, "json, avro or debezium"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-avro-schema", "x.avsc"}, 2, "need -format avro or debezium"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-format", "avro", "-avro-schema", "/nonexistent.avsc"}, 2, "bad Avro schema"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-format", "avro", "-avro-schemas", wh}, 2, "no <id>.avsc file"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-format", "debezium", "-avro-schemas", wh}, 2, "no <id>.avsc file"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-format", "avro", "-avro-schemas", wh, "-avro-schema", "x.avsc"}, 2, "not both"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-key", "nope"}, 64, `key column "nope" is not in table db.fact_orders`},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-key", "currency,nope"}, 64, `key column "nope" is not in table`},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-key", "currency,"}, 64, "an empty column name"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-key", "currency,currency"}, 64, `"currency" twice`},
		{[]string{"sink", "db.measures", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-key", "amount"}, 64, `key column "amount" of table db.measures is double: a key column is a string, binary, fixed, int, long, date or timestamp column`},
		{[]string{"sink", "db.measures", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-key", "tags"}, 64, `key column "tags" of table db.measures is list<string>`},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-key", "order_id,currency"}, 64, "lacks the partition source column(s) event_date"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-connect-timeout", "-1s"}, 2, "-connect-timeout"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-dead-letter", "nodot"}, 2, "namespace.name"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-dead-letter", "db.fact_orders"}, 64, "dead-letter table is the table"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-keep-snapshots", "-1"}, 2, "-keep-snapshots"},
	} {
		code, out, errs := icerun(tc.args...)
		if code != tc.code || !strings.Contains(out+unquoted(errs), tc.want) {
			t.Errorf("icerun %s = %d, %q%q; want %d with %q", strings.Join(tc.args, " "), code, out, errs, tc.code, tc.want)
		}
	}
}

// SIGTERM (and SIGINT) while the sink waits for its brokers stops it
// within a second or two with exit 0: it commits what is pending (here
// nothing), says so, and logs no warning of its own stop.
func TestSinkSIGTERMWhileConnecting(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) { sinkStopped(t, sig) })
	}
}

func sinkStopped(t *testing.T, sig syscall.Signal) {
	wh := warehouse(t)
	cmd := exec.Command(binary(t), "sink", "db.fact_orders", "-warehouse", wh, "-brokers", unreachable, "-topic", "t", "-group", "g", "-connect-timeout", "0")
	cmd.Dir = wh
	cmd.Env = []string{"HOME=" + wh}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	var lines []string
	for sc.Scan() { // the warning that it waits for the brokers
		lines = append(lines, sc.Text())
		if strings.Contains(sc.Text(), "not connected") {
			break
		}
	}
	require.NoError(t, cmd.Process.Signal(sig))
	sent := time.Now()
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	_ = cmd.Wait()
	took := time.Since(sent)
	errs := strings.Join(lines, "\n")
	require.Equal(t, 0, cmd.ProcessState.ExitCode(), "exit code after %v:\n%s", sig, errs)
	require.Less(t, took, 3*time.Second, "the sink took %s to stop:\n%s", took, errs)
	name := map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT"}[sig]
	require.Contains(t, errs, "icerun: "+name+": committing the pending rows, then leaving the group")
	require.NotContains(t, errs, "abandoned")
	require.Contains(t, errs, `msg="kafka sink stopped"`)
	require.Len(t, regexp.MustCompile(`level=WARN`).FindAllString(errs, -1), 1, "only the warning about the brokers:\n%s", errs)
}

// With -log-format json (or ICERUN_LOG_FORMAT=json) the sink logs JSON
// records on stderr.
func TestSinkLogsJSON(t *testing.T) {
	wh := warehouse(t)
	_, _, errs := icerun("sink", "db.fact_orders", "-warehouse", wh, "-brokers", unreachable, "-topic", "t", "-group", "g", "-connect-timeout", "1s", "-log-format", "json")
	found := false
	for _, line := range strings.Split(errs, "\n") {
		if strings.Contains(line, "not connected") && strings.HasPrefix(line, "{") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Errorf("log line is not JSON: %q: %v", line, err)
			}
			found = found || rec["msg"] != nil
		}
	}
	if !found {
		t.Errorf("no JSON record about the brokers in:\n%s", errs)
	}
}
