package main

import (
	"flag"
	"fmt"

	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/table"
)

// commitLockFlag adds -commit-lock to a command that commits rows.
func commitLockFlag(e *env, fs *flag.FlagSet) {
	fs.BoolVar(&e.commitLock, "commit-lock", false, "take the catalog's commit lock around each commit, so that processes using it take turns instead of conflicting (PostgreSQL SQL catalogs: an advisory lock; the embedded and SQLite catalogs: a file lock beside catalog.db)")
}

// commitLockOption is the table option of -commit-lock; the lock's
// resources are released when the command returns (env.close).
func (e *env) commitLockOption() (table.Option, error) {
	props := iceberg.Properties(e.props)
	if e.catalogName == "" {
		props = iceberg.Properties{"type": "local", "warehouse": e.warehouse}
	}
	lock, closeLock, err := catalogconfig.CommitLock(props)
	if err != nil {
		return nil, fmt.Errorf("-commit-lock: %w", err)
	}
	e.closers = append(e.closers, closeLock)
	return table.WithCommitLock(lock), nil
}

// close releases what the command opened for its whole run.
func (e *env) close() {
	for _, c := range e.closers {
		_ = c()
	}
}
