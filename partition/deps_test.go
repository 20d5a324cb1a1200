package partition

import (
	"go/build"
	"strings"
	"testing"
)

// partition knows nothing of the other icerun packages (shared/DESIGN.md).
func TestDeps(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, "github.com/icerun/icerun/") {
			t.Errorf("partition imports %s, want no icerun package", imp)
		}
	}
}
