package icerun_test

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestImportGraph keeps the layout of docs/design.md: partition and schema know
// nothing of each other, of commit, of the commit engine or of table;
// commit knows partition but not table, schema or the engine
// (internal/snapshotcommit), which knows commit and partition but not
// table or schema; table is the facade the higher layers (backfill,
// reruntest, cleanup, faults, the commands and examples) build on, never
// the other way round; internal/rowdelete (merge-on-read row location and
// delete files, under table) knows schema but not partition, commit or the
// engine; internal/spillsort (the external sort of sorted writes, under
// table) knows no icerun package at all. sink and sink/decode (the message decoders, which
// build on sink) link no Kafka client: only sink/kafka does. internal/enginestest
// (the reference engines' client) knows internal/catalogtest only: the
// engines' reads never go through icerun's code.
func TestImportGraph(t *testing.T) {
	above := []string{"table", "backfill", "reruntest", "cleanup", "faults", "integration", "cmd", "examples", "sink"}
	forbidden := map[string][]string{
		"partition":               append([]string{"schema", "commit", "internal/snapshotcommit", "recordid"}, above...),
		"schema":                  append([]string{"partition", "commit", "internal/snapshotcommit", "recordid"}, above...),
		"commit":                  append([]string{"schema", "recordid", "internal/snapshotcommit"}, above...),
		"internal/snapshotcommit": append([]string{"schema", "recordid"}, above...),
		"recordid":                append([]string{"partition", "schema", "commit", "internal/snapshotcommit"}, above...),
		// Locating rows and writing delete files knows schema only: the
		// commit of what it writes is table's.
		"internal/rowdelete": append([]string{"partition", "commit", "internal/snapshotcommit", "recordid"}, above...),
		// Sorting rows by spilling runs knows Arrow and a file IO only.
		"internal/spillsort": {"partition", "schema", "commit", "internal/snapshotcommit", "recordid", "internal/rowdelete", "internal/writeprops", "internal/fingerprint", "table", "backfill", "reruntest", "cleanup", "faults", "integration", "cmd", "examples", "sink"},
		"table":              {"backfill", "reruntest", "cleanup", "faults", "integration", "cmd", "examples", "sink"},
		// The sink is source-agnostic: no Kafka client, no command.
		"sink": {"sink/kafka", "sink/decode", "reruntest", "cleanup", "faults", "integration", "cmd", "examples"},
		// The decoders read message values from any source.
		"sink/decode": {"sink/kafka", "reruntest", "cleanup", "faults", "integration", "cmd", "examples"},
		// The engines read what icerun wrote, without icerun's code.
		"internal/enginestest": append([]string{"partition", "schema", "commit", "internal/snapshotcommit", "recordid",
			"internal/rowdelete", "internal/spillsort", "internal/writeprops", "internal/fingerprint", "catalogconfig", "parquetfile", "interop"}, above...),
	}
	for _, pkg := range []string{"sink", "sink/decode"} {
		p, err := build.ImportDir(pkg, 0) // the folder, read directly: build.Import would run go list
		if err != nil {
			t.Fatalf("import %s: %v", pkg, err)
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/twmb/franz-go") {
				t.Errorf("%s imports %s: only sink/kafka may link a Kafka client", pkg, imp)
			}
		}
	}
	for pkg, bad := range forbidden {
		p, err := build.ImportDir(pkg, 0) // the folder, read directly: build.Import would run go list
		if err != nil {
			t.Fatalf("import %s: %v", pkg, err)
		}
		for _, imp := range p.Imports {
			for _, b := range bad {
				if imp == "github.com/icerun/icerun/"+b || strings.HasPrefix(imp, "github.com/icerun/icerun/"+b+"/") {
					t.Errorf("%s imports %s; docs/design.md forbids it", pkg, imp)
				}
			}
		}
	}
}

// The examples are programs a user copies into a module of their own, where
// an import of icerun/internal fails to build ("use of internal package not
// allowed"): they use the public API only, tests included.
func TestExamplesUsePublicAPI(t *testing.T) {
	dirs, err := filepath.Glob("examples/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no examples found")
	}
	for _, dir := range dirs {
		p, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("import %s: %v", dir, err)
		}
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			if imp == "github.com/icerun/icerun/internal" || strings.HasPrefix(imp, "github.com/icerun/icerun/internal/") {
				t.Errorf("%s imports %s: a copied example would not build", dir, imp)
			}
		}
	}
}
