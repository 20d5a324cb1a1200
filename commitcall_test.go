package icerun_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// commitPoint is the one file whose code calls a catalog's CommitTable:
// the commit loop, which keeps the commit protocol's invariants.
const commitPoint = "internal/snapshotcommit/loop.go"

// TestOneCommitPoint holds the commit protocol to one place: no non-test
// code of the module calls CommitTable but the commit loop, the loop
// calls it once, and no non-test code commits an iceberg-go transaction
// (whose Commit calls CommitTable inside iceberg-go) but the places
// txnCommitAllowed names. A catalog that wraps another (a fault injector) passes
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
	checkTransactionCommits(t)
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

// transactionType is iceberg-go's transaction, whose Commit calls the
// catalog's CommitTable inside iceberg-go: a commit past the commit loop.
const transactionType = "github.com/apache/iceberg-go/table.Transaction"

// txnCommitAllowed are the packages whose code may commit an iceberg-go
// transaction itself, and why: neither is a commit icerun makes.
var txnCommitAllowed = map[string]string{
	"github.com/icerun/icerun/cmd/icerun-bench": "the benchmark's baseline is iceberg-go's own overwrite",
	"github.com/icerun/icerun/examples/evolve":  "the example renames a column as another engine would, outside icerun",
}

// checkTransactionCommits holds every commit icerun makes to the commit
// loop, for TestOneCommitPoint: no non-test code of the module calls Commit of an iceberg-go
// *table.Transaction (a call or a method value, found by type, whatever
// the variable is named), outside txnCommitAllowed. The module's
// packages are type-checked from source against the export data of their
// imports (go list -export).
func checkTransactionCommits(t *testing.T) {
	t.Helper()
	pkgs, imp := listModule(t, "./...")
	for _, p := range pkgs {
		if p.Module == nil || p.Module.Path != "github.com/icerun/icerun" || len(p.GoFiles) == 0 {
			continue
		}
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		for _, at := range txnCommits(t, fset, p.ImportPath, files, imp(fset)) {
			if why, ok := txnCommitAllowed[p.ImportPath]; ok {
				t.Logf("%s: allowed: %s", at, why)
				continue
			}
			t.Errorf("%s: Commit of an iceberg-go %s outside the commit loop: stage the change and commit it through internal/snapshotcommit (UpdateMetadata)", at, transactionType)
		}
	}
}

// TestOneCommitPointTransactionCheckFails shows the transaction check is not vacuous: it
// finds a transaction's Commit called and taken as a method value, under
// any variable name, through a struct field, and leaves alone other
// methods named Commit.
func TestOneCommitPointTransactionCheckFails(t *testing.T) {
	src := `package x
import (
	"context"
	icetable "github.com/apache/iceberg-go/table"
)
type other struct{}
func (other) Commit(context.Context) (*icetable.Table, error) { return nil, nil }
type holder struct{ txn *icetable.Transaction }
func f(ctx context.Context, tbl *icetable.Table, h holder) {
	change := tbl.NewTransaction()
	_, _ = change.Commit(ctx)
	_, _ = h.txn.Commit(ctx)
	g := change.Commit
	_, _ = g(ctx)
	_, _ = other{}.Commit(ctx)
}`
	_, imp := listModule(t, "./...") // the module's list holds iceberg-go/table: one go list for both tests
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, at := range txnCommits(t, fset, "x", []*ast.File{f}, imp(fset)) {
		got = append(got, at.String())
	}
	want := []string{"x.go:11:16", "x.go:12:15", "x.go:13:14"}
	if !slices.Equal(got, want) {
		t.Errorf("txnCommits(x.go) = %v, want %v", got, want)
	}
}

// listedPackage is what go list tells of a package.
type listedPackage struct {
	ImportPath, Dir, Export string
	GoFiles                 []string
	Module                  *struct{ Path string }
}

// listModule lists the packages of patterns and their dependencies, with
// export data, and returns an importer of that export data.
// The list of a set of patterns is made once per test binary.
func listModule(t *testing.T, patterns ...string) ([]listedPackage, func(*token.FileSet) types.Importer) {
	t.Helper()
	key := strings.Join(patterns, " ")
	listedMu.Lock()
	defer listedMu.Unlock()
	l, ok := listed[key]
	if !ok {
		l.pkgs, l.exports = goList(t, patterns...)
		listed[key] = l
	}
	exports := l.exports
	return l.pkgs, func(fset *token.FileSet) types.Importer {
		return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
			if exports[path] == "" {
				return nil, errors.New("no export data of " + path)
			}
			return os.Open(exports[path])
		})
	}
}

var (
	listedMu sync.Mutex
	listed   = map[string]struct {
		pkgs    []listedPackage
		exports map[string]string
	}{}
)

// goList runs go list -export -deps over patterns.
func goList(t *testing.T, patterns ...string) ([]listedPackage, map[string]string) {
	t.Helper()
	args := append([]string{"list", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,Module"}, patterns...)
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []listedPackage
	exports := map[string]string{}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
		exports[p.ImportPath] = p.Export
	}
	return pkgs, exports
}

// txnCommits type-checks files, the package path, and returns where they
// select Commit of an iceberg-go Transaction.
func txnCommits(t *testing.T, fset *token.FileSet, path string, files []*ast.File, imp types.Importer) []token.Position {
	t.Helper()
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	if _, err := (&types.Config{Importer: imp}).Check(path, fset, files, info); err != nil {
		t.Fatalf("type-check %s: %v", path, err)
	}
	var out []token.Position
	for sel, s := range info.Selections {
		fn, ok := s.Obj().(*types.Func)
		if !ok || fn.Name() != "Commit" {
			continue
		}
		recv := fn.Type().(*types.Signature).Recv().Type()
		if p, ok := recv.(*types.Pointer); ok {
			recv = p.Elem()
		}
		if named, ok := recv.(*types.Named); ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path()+"."+named.Obj().Name() == transactionType {
			out = append(out, fset.Position(sel.Sel.Pos()))
		}
	}
	slices.SortFunc(out, func(a, b token.Position) int { return strings.Compare(a.String(), b.String()) })
	return out
}
