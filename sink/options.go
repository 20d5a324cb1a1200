package sink

import (
	"fmt"
	"go.opentelemetry.io/otel/metric"
	"log/slog"
	"slices"
	"time"

	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/table"
)

// Option configures a [Sink]; [Open] validates every option and fails with
// [ErrBadOption] for a bad value.
type Option func(*config) error

// LatePolicy says what happens to a late row (see [WithEventTime]):
// [table.LatePolicy], the type [table.Writer.ReplaceWindow] takes.
type LatePolicy = table.LatePolicy

const (
	// LateToSideTable routes late rows to the side table.
	//
	// Deprecated: use [table.RouteLate], which this is.
	LateToSideTable = table.RouteLate
	// LateDrop drops late rows.
	//
	// Deprecated: use [table.DropLate], which this is.
	LateDrop = table.DropLate
)

type config struct {
	commitRows     int64
	commitBytes    int64
	commitInterval time.Duration
	targetFileSize int64
	rowGroupRows   int
	eventTime      string
	lateness       time.Duration
	late           LatePolicy
	key            []string
	upsert         *table.ChangeSpec
	deadLetter     icetable.Identifier
	policy         commit.Policy
	lock           commit.Locker
	expireRetain   int
	expireOlder    time.Duration
	expireEvery    int64
	runID          string
	codeVersion    string
	log            *slog.Logger
	meterProvider  metric.MeterProvider
	compactFiles   int     // compactfiles.go
	compactSmall   int64   // 0: three quarters of the table's target file size
	compactRatio   float64 // compactupsert.go
	member         string  // member.go: a fleet member's id; "" commits its own rows
}

func defaults() config {
	return config{
		commitRows:     1_000_000,
		commitBytes:    128 << 20,
		commitInterval: 10 * time.Second,
		rowGroupRows:   131_072,
		late:           table.RouteLate,
		expireRetain:   DefaultKeepSnapshots,
		expireEvery:    DefaultExpireEvery,
		compactFiles:   DefaultCompactFiles,
		compactRatio:   DefaultCompactDeleteRatio,
		runID:          uuid.NewString(),
		log:            slog.New(slog.DiscardHandler),
	}
}

// WithCommitRows commits once n rows are pending (default 1,000,000).
func WithCommitRows(n int64) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("%w: commit rows %d: must be above 0", ErrBadOption, n)
		}
		c.commitRows = n
		return nil
	}
}

// WithCommitBytes commits once the pending rows hold n bytes in Arrow
// memory (default 128 MiB).
func WithCommitBytes(n int64) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("%w: commit bytes %d: must be above 0", ErrBadOption, n)
		}
		c.commitBytes = n
		return nil
	}
}

// WithCommitInterval commits once the oldest pending row has waited d
// (default 10 s), checked on every [Sink.Write] and [Sink.CommitIfDue].
func WithCommitInterval(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: commit interval %s: must be above 0", ErrBadOption, d)
		}
		c.commitInterval = d
		return nil
	}
}

// WithTargetFileSize sets the size at which the sink rolls to a new data
// file (default: the table's write.target-file-size-bytes).
func WithTargetFileSize(bytes int64) Option {
	return func(c *config) error {
		if bytes <= 0 {
			return fmt.Errorf("%w: target file size %d: must be above 0", ErrBadOption, bytes)
		}
		c.targetFileSize = bytes
		return nil
	}
}

// WithEventTime makes column (a timestamp or date column of the table) the
// event time, and lateness the allowed lateness: a row is late when the
// table partition of its event time ended (or, when the table is not
// partitioned by that column, the row's own event time is) before the
// maximum event time of its source partition minus lateness. Default: no
// event time, no row is late.
func WithEventTime(column string, lateness time.Duration) Option {
	return func(c *config) error {
		if column == "" || lateness < 0 {
			return fmt.Errorf("%w: event time %q, lateness %s", ErrBadOption, column, lateness)
		}
		c.eventTime, c.lateness = column, lateness
		return nil
	}
}

// WithLateRows sets what happens to late rows (default [table.RouteLate]):
//   - [table.RouteLate] writes them to the side table
//     [table.StreamLateTable] with the reason and their source position,
//     in the same commits as the rows of the table;
//   - [table.DropLate] drops them, counted in [Stats].LateDropped;
//   - [table.RejectLate] fails the [Sink.Write] of a batch holding one
//     with a [*RowError] naming the first, wrapping [table.ErrLateRows]
//     and counted in [Stats].LateRejected; nothing of the batch is kept
//     (the Kafka adapter then hands the message to [Sink.Reject], as it
//     does a row the table cannot hold).
//
// Every late row is counted in [Stats].Late. The zero LatePolicy, or any
// other value, fails [Open] with [ErrBadOption].
func WithLateRows(p LatePolicy) Option {
	return func(c *config) error {
		if p != table.RouteLate && p != table.DropLate && p != table.RejectLate {
			return fmt.Errorf("%w: late policy %s", ErrBadOption, p)
		}
		c.late = p
		return nil
	}
}

// WithKey turns on keyed mode: the values of columns (top-level columns
// of the table of type string, binary, fixed, int, long, date or
// timestamp, such as the ids package recordid derives) are a row's key,
// and a row whose key the table partition it goes to or the pending batch
// already holds is dropped as a duplicate (counted in [Stats]). Default:
// off.
//
// Uniqueness is per table partition, so on a partitioned table the key
// columns must include every partition field's source column (event_time
// for day(event_time), as Flink's upsert sink requires): the key then
// determines the partition, and the table holds each key once. [Open]
// fails with [ErrBadOption] for a key without them, an unknown or nested
// column, or a column of another type (double, decimal, struct...). A
// producer's duplicate repeats every column (its id and its event time),
// so it is dropped whatever source partition it arrives on; one id with
// two event times is two keys. Values compare exactly and unambiguously:
// ("ab", "c") and ("a", "bc") are two keys, and a null differs from every
// value (an empty string too); a row whose key columns are all null has
// no key and is always kept.
//
// Cost: until merge-on-read deletes are available, the check against the
// table reads the key columns of every table partition the sink appends
// to, once per partition and sink lifetime, and keeps its keys in memory:
// a key's bytes plus about 20 of heap (a 36-character text key, such as a
// UUID: 57 MB per 1M keys; BenchmarkKeyedMemory), and a process's
// resident memory runs above its live heap (Go's GC lets the heap grow to
// twice it by default; 1.25 times it in the benchmark). A partition's keys
// are released only when the partition closes: with [WithEventTime] on a
// table partitioned by a time transform of the event-time column (such as
// day(event_time)), at the commit whose watermark passes the partition's
// end (it is compacted then).
// Without event time they are never released while the sink runs (and
// read again after [Sink.Start]): memory grows with the keys of every
// partition the stream reaches, all the table's on an unpartitioned
// table. Use event time on such a table for a long-running keyed stream,
// or budget memory for the keys of every partition it writes to.
//
// Keys other sinks commit to the partition later are read at the sink's
// next commit, from the data files they added only; a pending key among
// them fails the commit with [ErrKeyCommitted], and the replay from
// [Sink.Start] drops the duplicate. So a producer's duplicate sent to
// another source partition, owned by another sink, still ends as one row.
func WithKey(columns ...string) Option {
	return func(c *config) error {
		if len(columns) == 0 {
			return fmt.Errorf("%w: keyed mode without key columns", ErrBadOption)
		}
		for i, col := range columns {
			if col == "" {
				return fmt.Errorf("%w: key columns %q: an empty column name", ErrBadOption, columns)
			}
			if slices.Contains(columns[:i], col) {
				return fmt.Errorf("%w: key columns %q: %q twice", ErrBadOption, columns, col)
			}
		}
		c.key = slices.Clone(columns)
		return nil
	}
}

// WithRetry sets the commit retry policy (default commit.Policy{}'s
// defaults).
func WithRetry(p commit.Policy) Option {
	return func(c *config) error {
		if _, err := p.WithDefaults(); err != nil {
			return fmt.Errorf("%w: %w", ErrBadOption, err)
		}
		c.policy = p
		return nil
	}
}

// WithCommitLock holds l around every commit attempt (see commit.Locker).
func WithCommitLock(l commit.Locker) Option {
	return func(c *config) error { c.lock = l; return nil }
}

// WithRunID records id as the run in the sink's snapshots
// (icerun.run-id) and its side tables'. Default: a random UUID chosen by
// [Open], as table.Writer's; an empty id keeps it (the CLI's -run-id
// flag, unset, passes "").
func WithRunID(id string) Option {
	return func(c *config) error {
		if id != "" {
			c.runID = id
		}
		return nil
	}
}

// WithCodeVersion records v in the sink's snapshots (icerun.code-version).
func WithCodeVersion(v string) Option {
	return func(c *config) error { c.codeVersion = v; return nil }
}

// WithLogger logs every commit, fencing and compaction to l (default:
// nothing is logged).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return fmt.Errorf("%w: nil logger", ErrBadOption)
		}
		c.log = l
		return nil
	}
}

// The default snapshot expiry (see [WithSnapshotExpiry]): keep the last
// 20 snapshots of main, whatever their age, checked every 10 commits, so
// a table holds at most 30 snapshots however long the stream runs, and a
// commit costs about what the first commits did (every commit reads and
// writes metadata that lists every snapshot: with 100 kept, a commit cost
// 2.5 times as much). While the sink expires snapshots its commits also
// prune old metadata.json files (see [Sink.Commit]).
const (
	DefaultKeepSnapshots = 20
	DefaultExpireEvery   = 10
)

// WithSnapshotExpiry expires, after every every-th commit of the sink,
// the table's snapshots older than olderThan and not among the last
// retainLast of main (with backfill.Expire: icerun's lineage is kept in its
// checkpoint, files only expired snapshots referenced are removed). Every
// Iceberg commit writes metadata that lists every snapshot, so without
// expiry a commit's cost grows with the snapshots made. Default:
// [DefaultKeepSnapshots] snapshots, whatever their age, every
// [DefaultExpireEvery] commits; side tables expire alike. The positions
// survive expiry (see [PropertyPositions]).
func WithSnapshotExpiry(retainLast int, olderThan time.Duration, every int64) Option {
	return func(c *config) error {
		if retainLast < 1 || olderThan < 0 || every < 1 {
			return fmt.Errorf("%w: snapshot expiry: retain %d, older than %s, every %d commits", ErrBadOption, retainLast, olderThan, every)
		}
		c.expireRetain, c.expireOlder, c.expireEvery = retainLast, olderThan, every
		return nil
	}
}

// WithoutSnapshotExpiry turns the sink's snapshot expiry off (another job
// expires the table's snapshots).
func WithoutSnapshotExpiry() Option {
	return func(c *config) error {
		c.expireRetain, c.expireOlder, c.expireEvery = 0, 0, 0
		return nil
	}
}

// WithDeadLetter makes table the dead-letter table of the messages handed
// to [Sink.Reject]: created when missing (unpartitioned, columns
// [DeadLetterTarget], [LateSource], [LateSourcePartition], [LateOffset],
// [DeadLetterReason], [DeadLetterRaw]), it records its own positions, so
// that it takes every rejected message exactly once, and may be shared by
// the sinks of several tables. Default: none; Reject fails with a
// [BadMessageError].
func WithDeadLetter(table icetable.Identifier) Option {
	return func(c *config) error {
		if len(table) < 2 {
			return fmt.Errorf("%w: dead-letter table %q: want namespace and name", ErrBadOption, table)
		}
		c.deadLetter = append(icetable.Identifier(nil), table...)
		return nil
	}
}
