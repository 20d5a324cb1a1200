package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCleanupCommand(t *testing.T) {
	wh := warehouse(t)
	in := t.TempDir()
	parquetFile(t, filepath.Join(in, "one.parquet"), day, 10)
	common := []string{"-warehouse", wh, "-table", "db.fact_orders"}
	code, _, errs := icerun(append([]string{"replace"}, append(common, "-key", "event_date=2026-07-14", "-file", filepath.Join(in, "one.parquet"))...)...)
	require.Equal(t, 0, code, errs)

	orphan := filepath.Join(wh, "db.db", "fact_orders", "data", "event_date=2026-07-14", "crashed.parquet")
	require.NoError(t, os.WriteFile(orphan, []byte("PAR1"), 0o644))
	old := time.Now().Add(-7 * time.Hour)
	require.NoError(t, os.Chtimes(orphan, old, old))

	code, out, errs := icerun(append([]string{"cleanup"}, common...)...)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "crashed.parquet")
	assert.Contains(t, out, "would remove 1 orphan files")
	assert.FileExists(t, orphan, "a dry run removed the file")

	code, _, _ = icerun(append([]string{"cleanup", "-min-age", "0s"}, common...)...)
	assert.Equal(t, 2, code, "cleanup -min-age 0s = exit %d, want 2 (zero needs -any-age)", code)

	code, out, errs = icerun(append([]string{"cleanup", "-delete"}, common...)...)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "removed 1 of 1 orphan files")
	assert.NoFileExists(t, orphan)
	code, out, _ = icerun(append([]string{"replace"}, append(common, "-key", "event_date=2026-07-14", "-file", filepath.Join(in, "one.parquet"))...)...)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "unchanged:", "the table changed under the cleanup")
}
