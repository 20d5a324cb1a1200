package icerun_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// writePath are the packages whose code decides what data goes where.
var writePath = []string{"table", "commit", "internal/snapshotcommit", "partition", "schema", "backfill"}

// clockReads are the calls that read the wall clock or wait on it.
var clockReads = map[string][]string{
	"time":    {"Now", "Since", "Until", "After", "AfterFunc", "Tick", "NewTicker", "NewTimer", "Sleep"},
	"context": {"WithTimeout", "WithDeadline", "WithTimeoutCause", "WithDeadlineCause"},
}

// clockAllowed are the exceptions, stated here on purpose:
//   - the commit loop in internal/snapshotcommit/loop.go waits between attempts
//     (time.NewTimer for the backoff) and bounds the loop and the
//     unknown-outcome lookup (context.WithTimeout). Those decide how long
//     to keep trying, never which rows go to which partition or file;
//   - backfill/hygiene.go waits between the attempts of a maintenance
//     commit (snapshot expiry, metadata pruning) that lost a race
//     (time.NewTimer), which changes no data;
//   - table/quarantine.go stamps quarantined rows with the time they were
//     quarantined (the issue asks for it, for the person who reads them).
//     The quarantine partition is chosen by the input's fingerprint, never
//     by the time; the target table is never touched;
//   - internal/snapshotcommit/snapshot.go stamps the snapshot it writes with the commit's
//     wall time, Iceberg's snapshot timestamp-ms (iceberg-go's own commits
//     do the same). It orders snapshots for time travel; it never decides
//     which rows or files a partition holds.
//
// Anything else is a failure.
var clockAllowed = map[string]bool{
	"internal/snapshotcommit/loop.go: time.NewTimer":       true,
	"internal/snapshotcommit/loop.go: context.WithTimeout": true,
	"backfill/hygiene.go: time.NewTimer":                   true,
	"table/quarantine.go: time.Now":                        true,
	"internal/snapshotcommit/snapshot.go: time.Now":        true,
	// Durations in logs, spans and metrics only; never where data goes.
	"table/observe.go: time.Now":   true,
	"table/observe.go: time.Since": true,
}

// TestNoClockInWritePath is rule 7 of docs/design.md ("No clock"): nothing in the write path
// reads the wall clock. A job that read it would make a backfill's runs
// differ; the library itself must not. It parses every non-test source
// file of the write-path packages and fails on any clock read outside
// clockAllowed.
func TestNoClockInWritePath(t *testing.T) {
	var found []string
	for _, dir := range writePath {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, use := range clockUses(t, f, src) {
				if !clockAllowed[filepath.ToSlash(f)+": "+use.call] {
					found = append(found, use.String())
				}
			}
		}
	}
	for _, f := range found {
		t.Errorf("clock read in the write path: %s", f)
	}
}

// TestNoClockCheckFails shows the check is not vacuous: it finds the
// reads of a file that has them, under an alias too.
func TestNoClockCheckFails(t *testing.T) {
	src := `package x
import (
	t "time"
	"context"
)
func f(ctx context.Context) { _ = t.Now(); g(t.Now); ctx, _ = context.WithTimeout(ctx, 1) }
func g(func() t.Time) {}`
	var got []string
	for _, u := range clockUses(t, "x.go", []byte(src)) {
		got = append(got, u.call)
	}
	want := []string{"time.Now", "time.Now", "context.WithTimeout"}
	if !slices.Equal(got, want) {
		t.Errorf("clockUses(x.go) = %v, want %v", got, want)
	}
}

type clockUse struct {
	pos  token.Position
	call string // "time.Now"
}

func (u clockUse) String() string { return fmt.Sprintf("%s: %s", u.pos, u.call) }

// clockUses lists every reference (call or function value) to a clock
// read in src.
func clockUses(t *testing.T, name string, src []byte) []clockUse {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	local := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := clockReads[p]; !ok {
			continue
		}
		n := p
		if imp.Name != nil {
			n = imp.Name.Name
		}
		local[n] = p
	}
	var out []clockUse
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok || id.Obj != nil { // id.Obj != nil: a local variable, not a package
			return true
		}
		if p, ok := local[id.Name]; ok && slices.Contains(clockReads[p], sel.Sel.Name) {
			out = append(out, clockUse{pos: fset.Position(sel.Pos()), call: p + "." + sel.Sel.Name})
		}
		return true
	})
	return out
}
