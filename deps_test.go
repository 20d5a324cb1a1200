package icerun_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportGraph keeps the layout of DESIGN.md: partition and schema know
// nothing of each other, of commit or of table; commit knows partition but
// not table or schema.
func TestImportGraph(t *testing.T) {
	forbidden := map[string][]string{
		"partition": {"schema", "commit", "table"},
		"schema":    {"partition", "commit", "table"},
		"commit":    {"schema", "table"},
	}
	for pkg, bad := range forbidden {
		p, err := build.Import("github.com/icerun/icerun/"+pkg, ".", 0)
		if err != nil {
			t.Fatalf("import %s: %v", pkg, err)
		}
		for _, imp := range p.Imports {
			for _, b := range bad {
				if imp == "github.com/icerun/icerun/"+b || strings.HasPrefix(imp, "github.com/icerun/icerun/"+b+"/") {
					t.Errorf("%s imports %s; DESIGN.md forbids it", pkg, imp)
				}
			}
		}
	}
}
