package commit

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	icetable "github.com/apache/iceberg-go/table"
)

// Locker serialises the commits of one table across writers and
// processes. With a Locker (table.WithCommitLock), every commit attempt
// loads the table, plans and commits while holding the table's lock, so
// writers that share the Locker's backend never conflict with each other:
// N of them make N commits in N turns, each on its first attempt. Writers
// that do not take the lock (other engines, icerun writers without it)
// still commit optimistically; against those the loop retries as usual.
type Locker interface {
	// Lock blocks until the caller holds the commit lock of table ident,
	// or ctx is done (then it returns an error and holds nothing). unlock
	// releases the lock; it is called exactly once.
	Lock(ctx context.Context, ident icetable.Identifier) (unlock func(), err error)
}

// ErrLock wraps a failure to take or hold a [Locker]'s lock. Nothing was
// committed by the attempt that needed it.
var ErrLock = errors.New("commit: commit lock")

// PostgresLock is a [Locker] on PostgreSQL session advisory locks
// (pg_advisory_lock), taken on a connection of db held for the attempt.
// db is any database/sql handle on the PostgreSQL database the writers
// share, typically the catalog's own database (iceberg-go's SQL catalog
// does not expose its handle, so open one with the same URI and driver).
// PostgreSQL grants a contended advisory lock to its waiters in the order
// they asked, so the writer that has waited longest commits next; a wait
// longer than 5 s asks again (drivers time out on longer replies), which
// moves that writer behind the ones that asked since.
//
// The lock key is a 64-bit FNV-1a hash of "icerun.commit:" and the
// table identifier joined by dots; see [LockKey].
func PostgresLock(db *sql.DB) Locker {
	return pgLock{db: db}
}

type pgLock struct{ db *sql.DB }

// lockWaitSlice bounds one pg_advisory_lock call; see pgLock.Lock.
const lockWaitSlice = "5s"

// LockKey is the advisory lock key [PostgresLock] uses for table ident.
// Another program that commits to the same table can take the same lock
// to be serialised with icerun's writers.
func LockKey(ident icetable.Identifier) int64 {
	h := fnv.New64a()
	h.Write([]byte("icerun.commit:" + strings.Join(ident, ".")))
	return int64(h.Sum64())
}

func (l pgLock) Lock(ctx context.Context, ident icetable.Identifier) (func(), error) {
	if l.db == nil {
		return nil, fmt.Errorf("%w: nil *sql.DB", ErrLock)
	}
	key := LockKey(ident)
	conn, err := l.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: connect: %w", ErrLock, strings.Join(ident, "."), err)
	}
	// The wait is served in slices of lockWaitSlice (lock_timeout, which
	// PostgreSQL applies to advisory locks too): drivers give up on a
	// reply after a read timeout (bun's pgdriver: 10 s), and a queue of
	// writers can take longer than that. A slice that times out asks
	// again.
	if _, err := conn.ExecContext(ctx, "SET lock_timeout = '"+lockWaitSlice+"'"); err != nil {
		discardConn(conn)
		return nil, fmt.Errorf("%w: %s: set lock_timeout: %w", ErrLock, strings.Join(ident, "."), err)
	}
	for {
		_, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", key)
		if err == nil {
			break
		}
		if strings.Contains(err.Error(), "55P03") && ctx.Err() == nil { // lock_not_available: the slice ended
			continue
		}
		discardConn(conn)
		return nil, fmt.Errorf("%w: %s: pg_advisory_lock: %w", ErrLock, strings.Join(ident, "."), err)
	}
	if err := ctx.Err(); err != nil { // granted after the caller gave up
		release(conn, key)
		return nil, fmt.Errorf("%w: %s: %w", ErrLock, strings.Join(ident, "."), err)
	}
	return func() { release(conn, key) }, nil
}

// release unlocks key and returns conn to the pool; when the unlock fails
// the connection is closed instead, which ends its session and with it
// every advisory lock it holds.
func release(conn *sql.Conn, key int64) {
	var ok bool
	if err := conn.QueryRowContext(context.Background(), "SELECT pg_advisory_unlock($1)", key).Scan(&ok); err != nil || !ok {
		discardConn(conn)
		return
	}
	if _, err := conn.ExecContext(context.Background(), "RESET lock_timeout"); err != nil {
		discardConn(conn)
		return
	}
	_ = conn.Close()
}

// discardConn closes conn's session instead of returning it to the pool.
func discardConn(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}
