//go:build integration

package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	icetable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaSinkBadMessage: without -dead-letter, `icerun sink` stops at a
// message that is not a row with exit code 65, naming its offset, after
// committing the rows before it, and stops there again on a restart; with
// -dead-letter it routes the message to the dead-letter table and goes on.
func TestKafkaSinkBadMessage(t *testing.T) {
	brokers := os.Getenv("ICERUN_KAFKA_BROKERS")
	if brokers == "" {
		if required("kafka") {
			t.Fatal("target kafka is set but ICERUN_KAFKA_BROKERS is not")
		}
		t.Skip("no Kafka broker: run under scripts/integration kafka")
	}
	ctx := context.Background()
	dir := t.TempDir()
	bin := filepath.Join(dir, "icerun")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/icerun").CombinedOutput(); err != nil {
		t.Fatalf("build icerun: %v\n%s", err, out)
	}
	_, wh, ident, topic, cl := eventsTopic(t, brokers, "bad", 1)
	var recs []*kgo.Record
	for i := range 15 {
		v := fmt.Sprintf(`{"id":"m%d","event_time":"2026-07-14T12:00:%02d.123456789+02:00"}`, i, i)
		if i == 10 {
			v = `{"id":"m10","event_time":"noon"}`
		}
		recs = append(recs, &kgo.Record{Value: []byte(v)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	run := func(extra ...string) (int, string) {
		args := append([]string{"sink", "db.events", "-warehouse", wh, "-brokers", brokers, "-topic", topic,
			"-group", "g-" + topic, "-commit-interval", "200ms"}, extra...)
		cmd := exec.Command(bin, args...)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Signal(syscall.SIGTERM)
			err = <-done
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), log.String()
		}
		return 0, log.String()
	}
	for attempt := range 2 {
		code, log := run()
		if code != 65 || !strings.Contains(log, "offset 10") || !strings.Contains(log, `column \"event_time\"`) {
			t.Fatalf("run %d without -dead-letter: exit %d, want 65 naming offset 10 and the field\n%s", attempt, code, tail(log, 3000))
		}
		t.Logf("run %d: exit %d: %s", attempt, code, tail(strings.TrimSpace(log), 400))
		if got := tableIDs(t, ident, wh); len(got) != 10 {
			t.Fatalf("run %d: table holds %d rows, want the 10 before the bad message", attempt, len(got))
		}
	}
	// With a dead-letter table it goes on; SIGTERM once everything landed.
	cmd := exec.Command(bin, "sink", "db.events", "-warehouse", wh, "-brokers", brokers, "-topic", topic,
		"-group", "g-"+topic, "-commit-interval", "200ms", "-dead-letter", "db.events_dead")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && len(tableIDs(t, ident, wh)) < 14 {
		time.Sleep(500 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("sink with -dead-letter: %v\n%s", err, tail(log.String(), 3000))
	}
	if got := tableIDs(t, ident, wh); len(got) != 14 {
		t.Errorf("table holds %d rows, want 14", len(got))
	}
	if got := columnOf(t, icetable.Identifier{"db", "events_dead"}, wh, "_icerun_raw"); len(got) != 1 || got[0] != `{"id":"m10","event_time":"noon"}` {
		t.Errorf("dead letters = %q, want the bad message once", got)
	}
}
