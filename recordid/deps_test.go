package recordid

import (
	"go/build"
	"strings"
	"testing"
)

// TestImports keeps recordid a leaf: it knows Arrow and uuid, no icerun
// package, so that any pipeline stage can use it.
func TestImports(t *testing.T) {
	p, err := build.Import("github.com/icerun/icerun/recordid", ".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range p.Imports {
		if strings.HasPrefix(imp, "github.com/icerun/") {
			t.Errorf("recordid imports %s, want no icerun package", imp)
		}
	}
}
