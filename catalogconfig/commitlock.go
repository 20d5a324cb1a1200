package catalogconfig

import (
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"

	"github.com/icerun/icerun/commit"
)

// ErrNoCommitLock is returned by [CommitLock] for a catalog that has no
// commit lock icerun can take: REST, Glue, an in-memory SQLite database.
var ErrNoCommitLock = errors.New("catalogconfig: no commit lock for this catalog")

// CommitLock returns the [commit.Locker] that the writers of the catalog
// with properties props (as [Config.Properties] or [LocalProperties]
// return them) share, for table.WithCommitLock:
//
//   - a SQL catalog on PostgreSQL: [commit.PostgresLock] on a *sql.DB
//     opened with the catalog's driver and uri (sql.Open connects on
//     first use);
//   - a SQL catalog on a SQLite file, and type "local" (the embedded
//     catalog, [OpenLocal]): [commit.FileLock] in the folder
//     "<database file>.locks" beside the database, which every process on
//     the machine that opens the catalog finds.
//
// closeLock releases what the lock holds (the *sql.DB); call it once the
// writers are done. Other catalogs fail with [ErrNoCommitLock].
func CommitLock(props iceberg.Properties) (lock commit.Locker, closeLock func() error, err error) {
	noop := func() error { return nil }
	if strings.EqualFold(props["type"], "local") {
		dir, err := filepath.Abs(strings.TrimPrefix(cmp.Or(props["warehouse"], DefaultWarehouse), "file://"))
		if err != nil {
			return nil, nil, fmt.Errorf("catalogconfig: commit lock of local warehouse %q: %w", props["warehouse"], err)
		}
		return CommitLock(LocalProperties(dir))
	}
	if !strings.EqualFold(props["type"], "sql") {
		return nil, nil, fmt.Errorf("%w: type %q", ErrNoCommitLock, props["type"])
	}
	switch sqlcat.SupportedDialect(props[sqlcat.DialectKey]) {
	case sqlcat.Postgres:
		db, err := sql.Open(props[sqlcat.DriverKey], props["uri"])
		if err != nil {
			return nil, nil, fmt.Errorf("catalogconfig: commit lock: open %s: %s", props[sqlcat.DriverKey], Redact(props, err.Error()))
		}
		return commit.PostgresLock(db), db.Close, nil
	case sqlcat.SQLite:
		file, err := sqliteFile(props["uri"])
		if err != nil {
			return nil, nil, err
		}
		return commit.FileLock(file + ".locks"), noop, nil
	}
	return nil, nil, fmt.Errorf("%w: SQL dialect %q", ErrNoCommitLock, props[sqlcat.DialectKey])
}

// sqliteFile is the absolute path of the database file of a SQLite uri
// (file:PATH?params, file:///PATH, or a bare PATH).
func sqliteFile(uri string) (string, error) {
	path := uri
	if strings.HasPrefix(uri, "file:") {
		u, err := url.Parse(uri)
		if err != nil {
			return "", fmt.Errorf("catalogconfig: commit lock: SQLite uri %q: %w", uri, err)
		}
		path = u.Path
		if path == "" {
			path = u.Opaque
			if p, err := url.PathUnescape(path); err == nil {
				path = p
			}
		}
		if u.Query().Get("mode") == "memory" {
			path = ""
		}
	} else {
		path, _, _ = strings.Cut(path, "?")
	}
	if path == "" || path == ":memory:" {
		return "", fmt.Errorf("%w: in-memory SQLite database %q", ErrNoCommitLock, uri)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("catalogconfig: commit lock: SQLite uri %q: %w", uri, err)
	}
	return abs, nil
}
