//go:build unix

package commit_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
)

// TestFileLockExcludes: while one writer holds a table's file lock,
// another writer's Lock on the same table waits, and gets it once the
// first releases it; another table's lock is independent.
func TestFileLockExcludes(t *testing.T) {
	dir := t.TempDir()
	a, b := commit.FileLock(dir), commit.FileLock(dir)
	ctx := context.Background()
	unlock, err := a.Lock(ctx, []string{"ns", "t"})
	require.NoError(t, err)

	other, err := b.Lock(ctx, []string{"ns", "other"})
	require.NoError(t, err, "another table's lock")
	other()

	got := make(chan func(), 1)
	go func() {
		u, err := b.Lock(ctx, []string{"ns", "t"})
		assert.NoError(t, err)
		got <- u
	}()
	select {
	case <-got:
		t.Fatal("got the lock while another writer held it")
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	select {
	case u := <-got:
		u()
	case <-time.After(10 * time.Second):
		t.Fatal("the lock was not granted after its release")
	}
}

// TestFileLockErrors: a wait whose ctx ends and an unusable folder fail
// with ErrLock, holding nothing: a later Lock gets the lock.
func TestFileLockErrors(t *testing.T) {
	dir := t.TempDir()
	ident := []string{"ns", "t"}
	tests := []struct {
		name string
		run  func(t *testing.T) error
	}{
		{"ctx ends while waiting", func(t *testing.T) error {
			unlock, err := commit.FileLock(dir).Lock(context.Background(), ident)
			require.NoError(t, err)
			defer unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, err = commit.FileLock(dir).Lock(ctx, ident)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			return err
		}},
		{"empty folder", func(t *testing.T) error {
			_, err := commit.FileLock("").Lock(context.Background(), ident)
			return err
		}},
		{"folder is a file", func(t *testing.T) error {
			unlock, err := commit.FileLock(dir).Lock(context.Background(), ident)
			require.NoError(t, err)
			unlock()
			_, err = commit.FileLock(dir+"/"+lockFileName(t, dir)).Lock(context.Background(), ident)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run(t)
			require.Error(t, err)
			assert.True(t, errors.Is(err, commit.ErrLock), "%v", err)
			assert.Contains(t, err.Error(), "ns.t")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			unlock, err := commit.FileLock(dir).Lock(ctx, ident)
			require.NoError(t, err, "the lock is free after the failure")
			unlock()
		})
	}
}

// lockFileName is the one lock file in dir.
func lockFileName(t *testing.T, dir string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.lock"))
	require.NoError(t, err)
	require.Len(t, names, 1)
	return filepath.Base(names[0])
}
