package table_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
)

// metadataFiles lists the *.metadata.json files of the table in dir.
func metadataFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*", "*", "metadata", "*.metadata.json"))
	require.NoError(t, err)
	return m
}

// TestReplacePartitionCancelledInCatalogCommit cancels the call while the
// SQL catalog commits: after it wrote the new metadata.json, while its
// transaction waits for the database (held by another connection, released
// once the context is cancelled). The
// call must fail with context.Canceled and leave the table, its data files
// and its metadata files as they were.
func TestReplacePartitionCancelledInCatalogCommit(t *testing.T) {
	t.Parallel()
	cat, ident, dir := ordersTable(t)
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 40)
	scan, files, meta := catalogtest.CanonicalScan(t, cat, ident), catalogtest.DataFiles(t, dir), metadataFiles(t, dir)
	snaps := catalogtest.Snapshots(t, cat, ident)

	db, err := sql.Open(sqliteshim.ShimName, "file:"+filepath.Join(dir, "catalog.db")+"?_pragma=busy_timeout(30000)")
	require.NoError(t, err)
	defer db.Close()
	lock, err := db.Conn(context.Background())
	require.NoError(t, err)
	defer lock.Close()
	_, err = lock.ExecContext(context.Background(), "BEGIN IMMEDIATE") // the catalog's write transaction now waits
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		rows := orderdata.Reader(orderdata.Day(day0, 30), 16)
		defer rows.Release()
		_, err := w.ReplacePartition(ctx, dayKey(t, w, day0), rows)
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for len(metadataFiles(t, dir)) == len(meta) && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	require.Greater(t, len(metadataFiles(t, dir)), len(meta), "the catalog never wrote its metadata file")
	cancel()
	_, rerr := lock.ExecContext(context.Background(), "ROLLBACK") // the catalog's transaction goes on, cancelled
	require.NoError(t, rerr)
	err = <-done

	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, snaps, catalogtest.Snapshots(t, cat, ident))
	assert.Equal(t, scan, catalogtest.CanonicalScan(t, cat, ident), "table changed")
	assert.Equal(t, files, catalogtest.DataFiles(t, dir), "data files left behind")
	assert.Equal(t, meta, metadataFiles(t, dir), "metadata files left behind")
}

// txDoneCatalog is a catalog whose commit is cancelled in its last step:
// the call's context ends and database/sql reports the transaction it
// rolled back as done, an error that does not wrap context.Canceled.
type txDoneCatalog struct {
	catalog.Catalog
	cancel context.CancelFunc
}

func (c *txDoneCatalog) CommitTable(ctx context.Context, ident icetable.Identifier, reqs []icetable.Requirement, ups []icetable.Update) (icetable.Metadata, string, error) {
	c.cancel()
	return nil, "", fmt.Errorf("error updating table information: %w", sql.ErrTxDone)
}

func TestReplacePartitionCancelSurfacingAsTxDone(t *testing.T) {
	t.Parallel()
	cat, ident, dir := ordersTable(t)
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 40)
	files := catalogtest.DataFiles(t, dir)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w = open(t, &txDoneCatalog{Catalog: cat, cancel: cancel}, ident)
	rows := orderdata.Reader(orderdata.Day(day0, 30), 16)
	defer rows.Release()
	_, err := w.ReplacePartition(ctx, dayKey(t, w, day0), rows)
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, sql.ErrTxDone)
	assert.Equal(t, files, catalogtest.DataFiles(t, dir), "data files left behind")
}
