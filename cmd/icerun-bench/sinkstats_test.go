package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal"
)

// TestTableStatsChecksEveryID: the bench's check passes only when the
// table holds every produced id once, and names what is missing,
// duplicated or never produced; every row's visibility is its file's
// snapshot time minus its produced_at.
func TestTableStatsChecksEveryID(t *testing.T) {
	ctx := context.Background()
	cat, err := internal.OpenSQLite(ctx, t.TempDir())
	require.NoError(t, err)
	require.NoError(t, cat.CreateNamespace(ctx, catalog.NamespaceFromIdent(eventsIdent), nil))
	_, err = cat.CreateTable(ctx, eventsIdent, eventsSchema, catalog.WithPartitionSpec(&eventsSpec))
	require.NoError(t, err)
	start := time.Now().Add(-time.Minute)
	produced := start.Add(10 * time.Second)
	appendIDs(t, cat, produced, -1, 0)
	appendIDs(t, cat, produced, 1, 2)
	p := &producer{warm: 1, n: 2, extra: 1} // ids -1; 0, 1; 2

	st, err := tableStats(ctx, cat, p, start, time.Now())
	require.NoError(t, err)
	require.Empty(t, st.check)
	require.EqualValues(t, 4, st.totalRows)
	require.Equal(t, 2, st.files)
	require.Equal(t, 2, st.commits)
	require.Greater(t, st.p50, 45.0) // committed now, produced 50 s ago
	require.Less(t, st.p99, 120.0)

	appendIDs(t, cat, produced, 1, 9)
	p.extra = 2 // id 3 was produced too
	st, err = tableStats(ctx, cat, p, start, time.Now())
	require.NoError(t, err)
	require.Equal(t, "1 missing, 1 duplicated, 1 never produced", st.check)
}

// appendIDs commits one data file of rows with the given ids.
func appendIDs(t *testing.T, cat catalog.Catalog, produced time.Time, ids ...int64) {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, eventsIdent)
	require.NoError(t, err)
	sc, err := icetable.SchemaToArrowSchema(eventsSchema, nil, true, false)
	require.NoError(t, err)
	us := produced.UnixMicro()
	var rows []string
	for _, id := range ids {
		rows = append(rows, fmt.Sprintf(`{"id":%d,"event_ts":%d,"payload":"p","produced_at":%d}`, id, us, us))
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader("["+strings.Join(rows, ",")+"]"))
	require.NoError(t, err)
	defer rec.Release()
	at := array.NewTableFromRecords(sc, []arrow.Record{rec})
	defer at.Release()
	_, err = tbl.AppendTable(ctx, at, 1024, nil)
	require.NoError(t, err)
}
