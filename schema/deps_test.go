package schema

import (
	"go/build"
	"strings"
	"testing"
)

// TestDeps keeps schema a leaf of icerun: it may import iceberg-go and
// arrow-go, never another icerun package (commit, table, partition).
func TestDeps(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, "github.com/icerun/icerun/") {
			t.Errorf("schema imports %s, want no icerun package", imp)
		}
	}
}
