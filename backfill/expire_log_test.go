package backfill_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/table"
)

// An expiry logs through the writer's logger (table.WithLogger): the
// table, and how many snapshots there were before and after.
func TestExpireLogsThroughTheWritersLogger(t *testing.T) {
	ctx := context.Background()
	cat, ident, w, ks := setup(t)
	_, err := backfill.Run(ctx, w, ks[:3], orders)
	require.NoError(t, err)
	var logs bytes.Buffer
	maint, err := table.Open(ctx, cat, ident, table.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	require.NoError(t, err)
	require.NoError(t, backfill.Expire(ctx, maint, 1, 0))

	var expiries []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		if r["msg"] == "icerun expire" {
			expiries = append(expiries, r)
		}
	}
	require.Len(t, expiries, 1, "log: %s", logs.String())
	require.Equal(t, strings.Join(ident, "."), expiries[0]["table"])
	require.EqualValues(t, 3, expiries[0]["snapshots_before"])
	require.EqualValues(t, 1, expiries[0]["snapshots_after"])
}
