package icerun_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/examples/orderdata"
)

// readmeBlock returns the first ```go block after the README heading.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	raw, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(raw), "\n"+heading+"\n")
	require.True(t, ok, "README has %q", heading)
	_, code, ok := strings.Cut(after, "```go\n")
	require.True(t, ok, "a go block under %q", heading)
	code, _, ok = strings.Cut(code, "\n```")
	require.True(t, ok)
	return code + "\n"
}

// The README's library program is whole: pasted into a fresh module that
// requires icerun (replace directive to this checkout), it builds, and it
// loads a Parquet file twice, the second time unchanged.
func TestReadmeUsageInFreshModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a fresh module: not in -short")
	}
	root, err := filepath.Abs(".")
	require.NoError(t, err)
	mod := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(mod, "main.go"), []byte(readmeBlock(t, "## The library in one program")), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/load\n\ngo 1.26.0\n\nrequire github.com/icerun/icerun v0.0.0\n\nreplace github.com/icerun/icerun => "+root+"\n"), 0o644))
	sum, err := os.ReadFile("go.sum")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644))
	build := exec.Command("go", "build", "-o", "load", ".")
	build.Dir = mod
	// The module proxy stays as configured: on a fresh machine where only
	// `go run ./examples/daily` ran, the new module's graph still needs go.mod
	// files (go-logr's) that no build of this repository downloaded.
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	ctx := context.Background()
	cat, err := catalogconfig.OpenLocal(ctx, filepath.Join(mod, "warehouse"))
	require.NoError(t, err)
	require.NoError(t, orderdata.CreateTable(ctx, cat, orderdata.FactOrders))
	day := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	rec := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day, 50))
	defer rec.Release()
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	f, err := os.Create(filepath.Join(mod, "day.parquet"))
	require.NoError(t, err)
	require.NoError(t, pqarrow.WriteTable(tbl, f, 1024, nil, pqarrow.DefaultWriterProps()))
	f.Close() // WriteTable closed it

	for i, want := range []string{"added 50 deleted 0 unchanged false", "added 50 deleted 0 unchanged true"} {
		run := exec.Command("./load", "event_date=2026-07-14", "day.parquet")
		run.Dir = mod
		out, err := run.CombinedOutput()
		require.NoError(t, err, "run %d: %s", i, out)
		require.Contains(t, string(out), want)
	}
	run := exec.Command("./load", "event_date=2026-07-13", "day.parquet")
	run.Dir = mod
	out, err = run.CombinedOutput()
	require.Error(t, err, "rows of another day: the program fails, it does not print a zero Result")
	require.Contains(t, string(out), "nothing was committed")
}

// docFiles are the README and every Markdown file under docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir("docs", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	require.NoError(t, err)
	return files
}

// mdLink is a Markdown link or image target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link of the README and docs/ names a file that exists
// (anchors are not checked).
func TestDocLinksResolve(t *testing.T) {
	for _, file := range docFiles(t) {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range mdLink.FindAllStringSubmatch(string(raw), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") {
				continue
			}
			path := filepath.Join(filepath.Dir(file), target)
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s, which does not exist", file, m[1])
			}
		}
	}
}

// The README and docs/ describe the code as it is: no tracker numbers, no
// history of work sessions. The README stays a front door (under 300
// lines).
func TestDocsDescribeThePresent(t *testing.T) {
	history := regexp.MustCompile(`(?i)this session|issue #[0-9]+|\(issue [0-9]+\)|\bearlier (run|build|session|measurement)s?\b|\bpreviously\b|\bnow fixed\b|\bafter the fix\b|\bthe former\b`)
	for _, file := range docFiles(t) {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		for i, line := range strings.Split(string(raw), "\n") {
			if m := history.FindString(line); m != "" {
				t.Errorf("%s:%d: %q: docs describe the code as it is, not its history", file, i+1, m)
			}
		}
	}
	raw, err := os.ReadFile("README.md")
	require.NoError(t, err)
	if n := strings.Count(string(raw), "\n"); n >= 300 {
		t.Errorf("README.md has %d lines, want under 300: move detail into docs/", n)
	}
}

// docs/testing.md (its behaviour -> test table, and the tables of what
// -short skips) names tests and files that exist: a renamed or removed test
// fails here, not in a reader's grep.
func TestTestingDocNamesRealTests(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("docs", "testing.md"))
	require.NoError(t, err)
	table := string(raw)
	require.Contains(t, table, "\n## Which test proves which guarantee\n", "docs/testing.md has the behaviour -> test table")
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Za-z0-9_]+)\(`)
	require.NoError(t, filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			defined[m[1]] = true
		}
		return nil
	}))
	names := regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`").FindAllStringSubmatch(table, -1)
	files := regexp.MustCompile("`([A-Za-z0-9_./]+_test\\.go)`").FindAllStringSubmatch(table, -1)
	require.NotEmpty(t, names)
	require.NotEmpty(t, files)
	for _, m := range names {
		if !defined[m[1]] {
			t.Errorf("docs/testing.md names %s, which no test file defines", m[1])
		}
	}
	for _, m := range files {
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("docs/testing.md names %s, which does not exist", m[1])
		}
	}
}
