//go:build integration

package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/sink"
)

// TestKafkaSinkTLSSCRAM: `icerun sink` reads two topics from the broker's
// SASL_SSL listener (TLS verified against the run's CA, SCRAM-SHA-512 with
// the password from a file; then SCRAM-SHA-256 with every setting from
// ICERUN_SINK_ variables, the topics by -topic-regex and the password from
// ICERUN_SINK_KAFKA_SASL_PASSWORD),
// each topic's partition with its own position in the table; a wrong
// password fails the connection (exit 75) without showing the password.
func TestKafkaSinkTLSSCRAM(t *testing.T) {
	tlsBrokers, ca := os.Getenv("ICERUN_KAFKA_TLS_BROKERS"), os.Getenv("ICERUN_KAFKA_TLS_CA")
	user, pwFile := os.Getenv("ICERUN_KAFKA_SCRAM_USER"), os.Getenv("ICERUN_KAFKA_SCRAM_PASSWORD_FILE")
	if tlsBrokers == "" {
		if strings.Contains(os.Getenv("ICERUN_TARGETS"), "kafka") {
			t.Fatal("target kafka is set but ICERUN_KAFKA_TLS_BROKERS is not")
		}
		t.Skip("no Kafka broker: run under scripts/integration kafka")
	}
	raw, err := os.ReadFile(pwFile)
	if err != nil {
		t.Fatal(err)
	}
	password := strings.TrimSpace(string(raw))
	ctx := context.Background()
	dir := t.TempDir()
	bin := filepath.Join(dir, "icerun")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/icerun").CombinedOutput(); err != nil {
		t.Fatalf("build icerun: %v\n%s", err, out)
	}
	_, wh, ident, topicA, cl := eventsTopic(t, os.Getenv("ICERUN_KAFKA_BROKERS"), "tls-a", 1)
	topicB := strings.Replace(topicA, "tls-a", "tls-b", 1)
	createTopic(t, cl, topicB, 1)
	produce := func(topic string, from, to int) {
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf(`{"id":"%s-%d","event_time":"2026-07-14T12:00:00Z"}`, topic, i))})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce(topicA, 0, 10)
	produce(topicB, 0, 5)

	// run runs the sink until the table holds rows rows (then SIGTERM) or
	// it exits; it returns the exit code and the output.
	run := func(env []string, rows int, args ...string) (int, string) {
		args = append([]string{"sink", "db.events", "-warehouse", wh, "-commit-interval", "200ms", "-connect-timeout", "20s"}, args...)
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), env...)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		deadline := time.After(90 * time.Second)
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return cmd.ProcessState.ExitCode(), log.String()
			case <-deadline:
				_ = cmd.Process.Signal(syscall.SIGTERM)
				<-done
				return cmd.ProcessState.ExitCode(), log.String()
			case <-tick.C:
				if rows > 0 && len(tableIDs(t, ident, wh)) >= rows {
					_ = cmd.Process.Signal(syscall.SIGTERM)
					<-done
					return cmd.ProcessState.ExitCode(), log.String()
				}
			}
		}
	}
	positions := func() map[sink.SourcePartition]int64 {
		cat, err := catalogconfig.OpenLocal(ctx, wh)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		pos, err := sink.Positions(tbl)
		if err != nil {
			t.Fatal(err)
		}
		return pos
	}
	a, b := sink.SourcePartition{Source: "kafka:" + topicA}, sink.SourcePartition{Source: "kafka:" + topicB}

	code, log := run(nil, 15, "-brokers", tlsBrokers, "-topic", topicA+","+topicB, "-group", "g-"+topicA,
		"-kafka-tls-ca", ca, "-kafka-sasl", "scram-sha-512", "-kafka-sasl-user", user, "-kafka-sasl-password-file", pwFile, "-client-id", "icerun-it")
	if code != 0 || len(tableIDs(t, ident, wh)) != 15 {
		t.Fatalf("sink over TLS + SCRAM-SHA-512: exit %d, %d rows, want 0 and 15\n%s", code, len(tableIDs(t, ident, wh)), tail(log, 3000))
	}
	if pos := positions(); pos[a] != 9 || pos[b] != 4 {
		t.Errorf("positions = %v, want %s at 9 and %s at 4", pos, a, b)
	}
	if strings.Contains(log, password) {
		t.Errorf("the sink's output shows the password:\n%s", log)
	}

	// Every setting from the variables, SCRAM-SHA-256, the topics by a
	// regex; it resumes each topic from its own position.
	produce(topicA, 10, 13)
	produce(topicB, 5, 6)
	both := strings.Replace(topicA, "tls-a", "tls-[ab]", 1)
	env := []string{"ICERUN_SINK_BROKERS=" + tlsBrokers, "ICERUN_SINK_TOPIC_REGEX=" + both, "ICERUN_SINK_GROUP=g-" + topicA,
		"ICERUN_SINK_KAFKA_TLS_CA=" + ca, "ICERUN_SINK_KAFKA_SASL=scram-sha-256", "ICERUN_SINK_KAFKA_SASL_USER=" + user,
		"ICERUN_SINK_KAFKA_SASL_PASSWORD=" + password}
	code, log = run(env, 19)
	if got := tableIDs(t, ident, wh); code != 0 || len(got) != 19 {
		t.Fatalf("sink over TLS + SCRAM-SHA-256 from the environment: exit %d, %d rows, want 0 and 19\n%s", code, len(got), tail(log, 3000))
	}
	if pos := positions(); pos[a] != 12 || pos[b] != 5 {
		t.Errorf("positions = %v, want %s at 12 and %s at 5", pos, a, b)
	}

	// A wrong password: the brokers refuse the connection; the sink gives up
	// at -connect-timeout (exit 75) and shows no password.
	wrong := filepath.Join(dir, "wrong")
	if err := os.WriteFile(wrong, []byte("not-"+password), 0o600); err != nil {
		t.Fatal(err)
	}
	code, log = run(nil, 0, "-brokers", tlsBrokers, "-topic", topicA, "-group", "g-wrong-"+topicA, "-connect-timeout", "5s",
		"-kafka-tls-ca", ca, "-kafka-sasl", "scram-sha-512", "-kafka-sasl-user", user, "-kafka-sasl-password-file", wrong)
	if code != 75 || !strings.Contains(log, "not connected") {
		t.Errorf("sink with a wrong password: exit %d, want 75 (not connected)\n%s", code, tail(log, 3000))
	}
	if strings.Contains(log, password) {
		t.Errorf("the sink's output shows the password:\n%s", log)
	}
	t.Logf("wrong password: %s", tail(strings.TrimSpace(log), 400))
}
