package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// watched is a sink process and the peak resident set of its process
// tree, sampled every 100 ms while it runs.
type watched struct {
	cmd    *exec.Cmd
	exited chan struct{}
	peakKB chan int64
	quit   chan struct{}
}

func startWatched(cmd *exec.Cmd) (*watched, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w := &watched{cmd: cmd, exited: make(chan struct{}), peakKB: make(chan int64, 1), quit: make(chan struct{})}
	go func() { cmd.Wait(); close(w.exited) }()
	go func() {
		var kb int64
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			kb = max(kb, treePeakKB(cmd.Process.Pid))
			select {
			case <-w.quit:
				w.peakKB <- kb
				return
			case <-w.exited:
				w.peakKB <- kb
				return
			case <-t.C:
			}
		}
	}()
	return w, nil
}

func (w *watched) alive() bool {
	select {
	case <-w.exited:
		return false
	default:
		return true
	}
}

// stop ends the process (SIGTERM, SIGKILL after 30 s) and returns its
// peak resident set in MB, sampled before the signal.
func (w *watched) stop() float64 {
	close(w.quit)
	kb := <-w.peakKB
	w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.exited:
	case <-time.After(30 * time.Second):
		w.cmd.Process.Kill()
		<-w.exited
	}
	return float64(kb) / 1024
}

// kill ends the process if it still runs.
func (w *watched) kill() {
	if w.alive() {
		w.cmd.Process.Kill()
		<-w.exited
	}
}

// connectProperties writes Kafka Connect's worker and connector
// properties for a trial and returns their paths: standalone mode, JSON
// values without schemas, Iceberg's sink on the trial's SQLite catalog
// (a JdbcCatalog named as icerun's embedded one) with its own control
// topic, committing every iv.
func connectProperties(cfg sinkConfig, dir, topic, name string, iv time.Duration) (worker, connector string, err error) {
	port, err := freePort()
	if err != nil {
		return "", "", err
	}
	worker = filepath.Join(dir, "worker.properties")
	connector = filepath.Join(dir, "connector.properties")
	w := []string{
		"bootstrap.servers=" + cfg.brokers,
		"key.converter=org.apache.kafka.connect.storage.StringConverter",
		"value.converter=org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable=false",
		"offset.storage.file.filename=" + filepath.Join(dir, "connect.offsets"),
		fmt.Sprintf("listeners=http://127.0.0.1:%d", port),
		"plugin.discovery=only_scan",
	}
	w = append(w, cfg.workerProps...)
	c := []string{
		"name=" + name,
		"connector.class=org.apache.iceberg.connect.IcebergSinkConnector",
		fmt.Sprintf("tasks.max=%d", cfg.tasks),
		"topics=" + topic,
		"iceberg.tables=" + strings.Join(eventsIdent, "."),
		"iceberg.catalog=icerun",
		"iceberg.catalog.catalog-impl=org.apache.iceberg.jdbc.JdbcCatalog",
		"iceberg.catalog.uri=jdbc:sqlite:" + filepath.Join(dir, "catalog.db"),
		"iceberg.catalog.jdbc.schema-version=V1",
		"iceberg.catalog.warehouse=file://" + dir,
		"iceberg.control.topic=control-" + name,
		fmt.Sprintf("iceberg.control.commit.interval-ms=%d", iv.Milliseconds()),
	}
	if err := os.WriteFile(worker, []byte(strings.Join(w, "\n")+"\n"), 0o644); err != nil {
		return "", "", err
	}
	return worker, connector, os.WriteFile(connector, []byte(strings.Join(c, "\n")+"\n"), 0o644)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
