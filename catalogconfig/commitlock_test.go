package catalogconfig

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommitLock: each catalog shape gets its lock, or ErrNoCommitLock;
// the file locks of a local warehouse lie beside its catalog.db, whichever
// way the catalog is named.
func TestCommitLock(t *testing.T) {
	dir := t.TempDir()
	odd := filepath.Join(t.TempDir(), "50%off what?")
	ident := []string{"ns", "t"}
	tests := []struct {
		name    string
		props   iceberg.Properties
		lockDir string // where the lock files go; "" for no file lock
		err     error
	}{
		{"local", iceberg.Properties{"type": "local", "warehouse": dir}, filepath.Join(dir, "catalog.db.locks"), nil},
		{"local file url", iceberg.Properties{"type": "local", "warehouse": "file://" + dir}, filepath.Join(dir, "catalog.db.locks"), nil},
		{"LocalProperties", LocalProperties(dir), filepath.Join(dir, "catalog.db.locks"), nil},
		{"LocalProperties of an odd folder", LocalProperties(odd), filepath.Join(odd, "catalog.db.locks"), nil},
		{"sqlite bare path", iceberg.Properties{"type": "sql", "sql.dialect": "sqlite", "uri": filepath.Join(dir, "c.db")}, filepath.Join(dir, "c.db.locks"), nil},
		{"postgres", iceberg.Properties{"type": "sql", "sql.dialect": "postgres", "sql.driver": "pg", "uri": "postgres://u:secret@127.0.0.1:1/db"}, "", nil},
		{"sqlite in memory", iceberg.Properties{"type": "sql", "sql.dialect": "sqlite", "uri": "file::memory:"}, "", ErrNoCommitLock},
		{"sqlite memory mode", iceberg.Properties{"type": "sql", "sql.dialect": "sqlite", "uri": "file:x.db?mode=memory"}, "", ErrNoCommitLock},
		{"mysql", iceberg.Properties{"type": "sql", "sql.dialect": "mysql", "uri": "x"}, "", ErrNoCommitLock},
		{"rest", iceberg.Properties{"type": "rest", "uri": "http://127.0.0.1:1"}, "", ErrNoCommitLock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lock, closeLock, err := CommitLock(tt.props)
			if tt.err != nil {
				assert.True(t, errors.Is(err, tt.err), "%v", err)
				return
			}
			require.NoError(t, err)
			defer func() { assert.NoError(t, closeLock()) }()
			require.NotNil(t, lock)
			if tt.lockDir == "" {
				return
			}
			unlock, err := lock.Lock(context.Background(), ident)
			require.NoError(t, err)
			unlock()
			names, err := filepath.Glob(filepath.Join(tt.lockDir, "*.lock"))
			require.NoError(t, err)
			assert.Len(t, names, 1, "lock file in %s", tt.lockDir)
		})
	}
}
