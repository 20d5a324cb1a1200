package table_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/table"
)

// WithLogger covers every call that commits, not only replacements: an
// upsert and a publish each log their outcome under their own operation's
// name ("icerun upsert", "icerun publish"), with its description in op.
func TestLoggerCoversUpsertAndPublish(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	replaceDay(t, open(t, cat, ident), day0, 20)
	w := open(t, cat, ident, table.WithLogger(logger))
	bw := open(t, cat, ident, table.WithBranch("audit"), table.WithLogger(logger))
	replaceDay(t, bw, day0, 10)

	for range 2 {
		_, err := w.Publish(ctx, "audit")
		require.NoError(t, err)
	}
	for range 2 {
		_, err := w.Upsert(ctx, reader(orderdata.Day(day0, 5)), "order_id")
		require.NoError(t, err)
	}

	type rec struct{ msg, op, outcome string }
	var got []rec
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		op, _ := r["op"].(string)
		outcome, _ := r["outcome"].(string)
		switch {
		case strings.Contains(op, "upsert"):
			op = "upsert"
		case strings.Contains(op, "publish"):
			op = "publish"
		case strings.Contains(op, "replace"):
			op = "replace"
		}
		got = append(got, rec{r["msg"].(string), op, outcome})
	}
	require.Contains(t, got, rec{"icerun upsert", "upsert", "committed"})
	require.Contains(t, got, rec{"icerun upsert", "upsert", "unchanged"})
	require.Contains(t, got, rec{"icerun publish", "publish", "committed"})
	require.Contains(t, got, rec{"icerun publish", "publish", "unchanged"})
}
