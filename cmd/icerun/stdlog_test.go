package main

import (
	"bytes"
	"encoding/json"
	"log"
	"log/slog"
	"testing"
)

// iceberg-go's warnings, printed with the standard log package, reach the
// command's logger as WARN records in its format, not as bare lines.
func TestStdLogIsRouted(t *testing.T) {
	var buf bytes.Buffer
	restore := routeStdLog(slog.New(slog.NewJSONHandler(&buf, nil)))
	log.Printf("Warning: Failed to delete old metadata file: %s error: %v", "s3://b/m.json", "gone")
	restore()
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("not one JSON record: %q: %v", buf.String(), err)
	}
	if rec["level"] != "WARN" || rec["source"] != "iceberg-go" || rec["msg"] != "Failed to delete old metadata file: s3://b/m.json error: gone" {
		t.Errorf("record = %v", rec)
	}
	buf.Reset()
	log.SetOutput(&buf)
	defer log.SetOutput(log.Writer())
	log.Print("after")
	if !bytes.Contains(buf.Bytes(), []byte("after")) {
		t.Error("restore did not give the log package its output back")
	}
}
