package icerun_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// commitPoint is the one file whose code calls a catalog's CommitTable:
// the commit loop, which keeps the commit protocol's invariants.
const commitPoint = "internal/snapshotcommit/loop.go"

// TestOneCommitPoint holds the commit protocol to one place: no non-test
// code of the module calls CommitTable but the commit loop, and the loop
// calls it once. A catalog that wraps another (a fault injector) passes
// its own CommitTable on to the wrapped catalog's; that call is the
// loop's, relayed, and is allowed inside a method named CommitTable.
func TestOneCommitPoint(t *testing.T) {
	var calls []commitCall
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		calls = append(calls, commitCalls(t, filepath.ToSlash(p), src)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var atPoint int
	for _, c := range calls {
		switch {
		case c.relay:
		case c.pos.Filename == commitPoint:
			atPoint++
		default:
			t.Errorf("%s: CommitTable called outside the commit loop (%s): commit through it", c, commitPoint)
		}
	}
	if atPoint != 1 {
		t.Errorf("%s calls CommitTable %d times, want 1", commitPoint, atPoint)
	}
}

// TestOneCommitPointCheckFails shows the check is not vacuous: it finds
// the calls of a file that has them, tells a relaying CommitTable method
// apart, and takes a method declaration for no call.
func TestOneCommitPointCheckFails(t *testing.T) {
	src := `package x
type wrap struct{ c cat }
func (w wrap) CommitTable(a, b int) (int, error) { return w.c.CommitTable(a, b) }
func commit(c cat) { c.CommitTable(1, 2); f := func() { _, _ = c.CommitTable(3, 4) }; f(); g := c.CommitTable; g(5, 6) }
type cat interface{ CommitTable(a, b int) (int, error) }`
	var got []string
	for _, c := range commitCalls(t, "x.go", []byte(src)) {
		got = append(got, c.String())
	}
	want := []string{"x.go:3:63 (relayed)", "x.go:4:24", "x.go:4:66", "x.go:4:99"}
	if !slices.Equal(got, want) {
		t.Errorf("commitCalls(x.go) = %v, want %v", got, want)
	}
}

type commitCall struct {
	pos   token.Position
	relay bool // inside a method named CommitTable: a wrapping catalog's
}

func (c commitCall) String() string {
	s := fmt.Sprintf("%s:%d:%d", c.pos.Filename, c.pos.Line, c.pos.Column)
	if c.relay {
		s += " (relayed)"
	}
	return s
}

// commitCalls lists every call of a method or function named
// CommitTable in src, and every method value of that name (a function
// value called later is a call too).
func commitCalls(t *testing.T, name string, src []byte) []commitCall {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	var out []commitCall
	for _, decl := range f.Decls {
		relay := false
		if fd, ok := decl.(*ast.FuncDecl); ok {
			relay = fd.Recv != nil && fd.Name.Name == "CommitTable"
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			var at token.Pos
			switch e := n.(type) {
			case *ast.SelectorExpr: // a call, or a method value
				if e.Sel.Name == "CommitTable" {
					at = e.Sel.Pos()
				}
			case *ast.CallExpr:
				if id, ok := e.Fun.(*ast.Ident); ok && id.Name == "CommitTable" {
					at = id.Pos()
				}
			}
			if at.IsValid() {
				out = append(out, commitCall{pos: fset.Position(at), relay: relay})
			}
			return true
		})
	}
	return out
}
