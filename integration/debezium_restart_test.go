//go:build integration

package integration

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// restartConnect SIGKILLs the Kafka Connect worker of the debezium target
// (ICERUN_DEBEZIUM_RESTART), starts it again and waits until connector
// name's task runs on the new worker.
func restartConnect(ctx context.Context, t *testing.T, connectURL, name string) {
	t.Helper()
	restart := os.Getenv("ICERUN_DEBEZIUM_RESTART")
	if restart == "" {
		if required("debezium") {
			t.Fatal("target debezium is set but ICERUN_DEBEZIUM_RESTART is not")
		}
		t.Log("no ICERUN_DEBEZIUM_RESTART: Connect is not restarted")
		return
	}
	t0 := time.Now()
	if out, err := exec.CommandContext(ctx, "bash", "-c", restart).CombinedOutput(); err != nil {
		t.Fatalf("restart Connect: %v\n%s", err, out)
	}
	waitConnector(ctx, t, connectURL, name)
	t.Logf("Kafka Connect SIGKILLed and restarted, connector %s running again after %s", name, time.Since(t0).Round(time.Millisecond))
}

// restartBroker SIGKILLs the broker of the kafka target
// (ICERUN_KAFKA_RESTART) and starts it again.
func restartBroker(t *testing.T) {
	t.Helper()
	restart := os.Getenv("ICERUN_KAFKA_RESTART")
	if restart == "" {
		if required("kafka") {
			t.Fatal("target kafka is set but ICERUN_KAFKA_RESTART is not")
		}
		t.Log("no ICERUN_KAFKA_RESTART: the broker is not restarted")
		return
	}
	t0 := time.Now()
	if out, err := exec.Command(restart).CombinedOutput(); err != nil {
		t.Fatalf("restart the broker: %v\n%s", err, out)
	}
	t.Logf("broker SIGKILLed and restarted (%s)", time.Since(t0).Round(time.Millisecond))
}
