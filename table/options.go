package table

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/google/uuid"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/schema"
)

// Option configures a [Writer]. [Open] validates every option and returns
// an error for a bad value; it never rewrites one silently.
type Option func(*config) error

type config struct {
	runID       string
	codeVersion string
	policy      commit.Policy
	lock        commit.Locker // options_lock.go
	unknown     schema.UnknownPolicy
	splitRows   int64
	maxWriters  int
	// rowGroupRows, when above 0, caps the Parquet row group of the files
	// written, unless the table sets write.parquet.row-group-limit itself:
	// replaceRowGroupRows, or Upsert's and Compact's (rewriteRowGroupRows,
	// compactRowGroupRows).
	rowGroupRows int64
	upsertOrder  []string // options_upsert.go
	// upsertNewerOnly: Upsert compares with the stored rows' order
	// (options_upsert.go).
	upsertNewerOnly bool
	writeMode       WriteMode      // options_mode.go
	compact         *CompactPolicy // options_compact.go; nil: DefaultCompactPolicy
	contract        *schema.Contract
	branch          string // options_branch.go; "" is main
	force           bool
	// observe.go
	logger         *slog.Logger
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
}

// replaceRowGroupRows caps the row groups of the files a replace writes
// when the table sets no write.parquet.row-group-limit (iceberg-go's
// default is 1,048,576 rows). Each encoder buffers its row group until it
// is flushed, so this is what bounds a large partition's memory: a
// partition of 1M rows is two files of 500k rows, and with row groups of
// this size a 5M-row partition peaks at 153-154 MB of RSS where
// 1,048,576-row groups took 164-166 MB (1M rows: 128-132 MB either way),
// for 1-2% more CPU (arrow-go starts its dictionaries again in every row
// group).
const replaceRowGroupRows = 512 << 10

// Defaults of the options.
const (
	DefaultCodeVersion = "unversioned"
	DefaultSplitRows   = 256 << 10
	// DefaultMaxWriters is the most encoders one replacement runs without
	// WithParallelWrite; Open lowers it to GOMAXPROCS, since on one core a
	// second encoder only adds a file and a second encoder's memory.
	DefaultMaxWriters = 2
)

// ErrBadOption is returned by Open for an invalid option value.
var ErrBadOption = errors.New("table: bad option")

func defaults() config {
	return config{
		runID:        uuid.NewString(),
		codeVersion:  DefaultCodeVersion,
		policy:       commit.DefaultPolicy,
		unknown:      schema.IgnoreUnknown,
		splitRows:    DefaultSplitRows,
		maxWriters:   min(DefaultMaxWriters, runtime.GOMAXPROCS(0)),
		rowGroupRows: replaceRowGroupRows,
	}
}

// WithRunID names the run recorded in every snapshot summary
// (icerun.run-id). Default: a random UUID chosen by Open.
func WithRunID(id string) Option {
	return func(c *config) error {
		if id == "" {
			return fmt.Errorf("%w: empty run id", ErrBadOption)
		}
		c.runID = id
		return nil
	}
}

// WithCodeVersion names the transformation that produced the rows
// (icerun.code-version), e.g. a git commit. A partition is left Unchanged
// only when the same input comes from the same code version. Default
// [DefaultCodeVersion].
func WithCodeVersion(v string) Option {
	return func(c *config) error {
		if v == "" {
			return fmt.Errorf("%w: empty code version", ErrBadOption)
		}
		c.codeVersion = v
		return nil
	}
}

// WithRetry sets the commit retry budget. Zero fields take the values of
// [commit.DefaultPolicy].
func WithRetry(p commit.Policy) Option {
	return func(c *config) error {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrBadOption, err)
		}
		c.policy = p
		return nil
	}
}

// WithUnknownFields sets what happens to input fields the table does not
// have. Default [schema.IgnoreUnknown]: they are dropped and listed in
// [commit.Result].Ignored.
func WithUnknownFields(p schema.UnknownPolicy) Option {
	return func(c *config) error {
		if p != schema.IgnoreUnknown && p != schema.RejectUnknown {
			return fmt.Errorf("%w: unknown-field policy %d", ErrBadOption, p)
		}
		c.unknown = p
		return nil
	}
}

// WithParallelWrite lets one replacement encode its Parquet files with up
// to maxWriters encoders at once. A new encoder (and so a new file) starts
// only after every running one has received splitRows rows, so a small
// partition stays one file. Defaults [DefaultMaxWriters] (at most
// GOMAXPROCS) and [DefaultSplitRows]. maxWriters 1 writes serially.
func WithParallelWrite(maxWriters int, splitRows int64) Option {
	return func(c *config) error {
		if maxWriters < 1 || splitRows < 1 {
			return fmt.Errorf("%w: parallel write %d writers, %d rows", ErrBadOption, maxWriters, splitRows)
		}
		c.maxWriters, c.splitRows = maxWriters, splitRows
		return nil
	}
}
