//go:build interop

package interop

import (
	"testing"

	"github.com/icerun/icerun/internal/enginestest"
)

// Engines is the reference engines' client ([enginestest.Engines]) with
// the suite's catalogs ([Engines.NewCatalog], [Engines.EachTarget]). It is
// safe for concurrent use; requests are served one at a time.
type Engines struct{ *enginestest.Engines }

// The suite's names for the client's vocabulary, which
// internal/enginestest defines.
type (
	Request  = enginestest.Request
	Response = enginestest.Response
	Scan     = enginestest.Scan
	Expr     = enginestest.Expr
	Row      = enginestest.Row
)

// ErrNoEngines is the reason the suite skips: the engines are not installed.
var ErrNoEngines = enginestest.ErrNoEngines

// Get returns the process-wide engines, starting them on first use. It
// skips the test when the engines are not installed, or fails it under
// CI=true.
func Get(t testing.TB) *Engines {
	t.Helper()
	return &Engines{enginestest.Get(t)}
}

// SparkSQL is [enginestest.SparkSQL].
func SparkSQL(sql string) Request { return enginestest.SparkSQL(sql) }

// PyIcebergScan is [enginestest.PyIcebergScan].
func PyIcebergScan(cat, table string, s Scan) Request {
	return enginestest.PyIcebergScan(cat, table, s)
}

// Inspect is [enginestest.Inspect].
func Inspect(cat, table, what string) Request { return enginestest.Inspect(cat, table, what) }

// Cmp is [enginestest.Cmp].
func Cmp(col, op, value string) Expr { return enginestest.Cmp(col, op, value) }

// IsNull is [enginestest.IsNull].
func IsNull(col string) Expr { return enginestest.IsNull(col) }

// IsNaN is [enginestest.IsNaN].
func IsNaN(col string) Expr { return enginestest.IsNaN(col) }

// And is [enginestest.And].
func And(args ...Expr) Expr { return enginestest.And(args...) }
