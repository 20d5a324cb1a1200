//go:build unix

package commit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	icetable "github.com/apache/iceberg-go/table"
)

// FileLock is a [Locker] on exclusive flock(2) locks, for writers on one
// machine: the embedded SQLite catalog, whose database is one file that
// every writer opens locally (catalogconfig.LocalLock). The lock of table
// ident is the file dir/<[LockKey] as 16 hex digits>.lock, created when
// missing (dir too) and never removed; each [Locker.Lock] call opens it
// anew, so goroutines of one process and separate processes sharing dir
// take turns alike. The kernel releases the lock when the holder's process
// ends, however it ends.
//
// A writer waiting for the lock stops waiting when its ctx is done; the
// lock, if the kernel grants it afterwards, is released at once. Linux
// does not promise that waiters are served in the order they asked (as
// PostgreSQL's advisory locks are, see [PostgresLock]); a wait is bounded
// by the commit loop's [Policy].Timeout. dir must be on a local file
// system: flock on a network file system may not exclude other machines.
func FileLock(dir string) Locker {
	return fileLock{dir: dir}
}

type fileLock struct{ dir string }

// path is the lock file of ident.
func (l fileLock) path(ident icetable.Identifier) string {
	return filepath.Join(l.dir, fmt.Sprintf("%016x.lock", uint64(LockKey(ident))))
}

func (l fileLock) Lock(ctx context.Context, ident icetable.Identifier) (func(), error) {
	name := strings.Join(ident, ".")
	if l.dir == "" {
		return nil, fmt.Errorf("%w: %s: empty lock folder", ErrLock, name)
	}
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrLock, name, err)
	}
	f, err := os.OpenFile(l.path(ident), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrLock, name, err)
	}
	// flock blocks in the kernel and cannot be cancelled: it runs on its
	// own goroutine, and a caller that gives up leaves that goroutine to
	// release the lock (by closing the file) once it is granted.
	granted := make(chan error, 1)
	go func() { granted <- flock(f) }()
	select {
	case err := <-granted:
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("%w: %s: flock %s: %w", ErrLock, name, f.Name(), err)
		}
		return func() { _ = f.Close() }, nil // closing the only descriptor releases the lock
	case <-ctx.Done():
		go func() {
			<-granted
			_ = f.Close()
		}()
		return nil, fmt.Errorf("%w: %s: %w", ErrLock, name, context.Cause(ctx))
	}
}

// flock takes f's exclusive lock, waiting as long as it takes.
func flock(f *os.File) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := raw.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), syscall.LOCK_EX)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}
