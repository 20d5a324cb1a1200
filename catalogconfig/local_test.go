package catalogconfig

import (
	"context"
	"path/filepath"
	"testing"

	icetable "github.com/apache/iceberg-go/table"
)

// Folder names with URI-reserved characters open, and reopen the same
// catalog file.
func TestOpenLocalOddFolderNames(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"plain", "50%off", "a%2Fb", "x%41y", "what?", "hash#tag", "sp ace", "ünï"} {
		dir := filepath.Join(t.TempDir(), name)
		cat, err := OpenLocal(ctx, dir)
		if err != nil {
			t.Fatalf("OpenLocal(%q) = %v", name, err)
		}
		if err := cat.CreateNamespace(ctx, icetable.Identifier{"ns"}, nil); err != nil {
			t.Fatalf("%q: create namespace: %v", name, err)
		}
		again, err := OpenLocal(ctx, dir)
		if err != nil {
			t.Fatalf("reopen %q = %v", name, err)
		}
		if ok, err := again.CheckNamespaceExists(ctx, icetable.Identifier{"ns"}); err != nil || !ok {
			t.Errorf("reopened %q: namespace exists = %t, %v, want true", name, ok, err)
		}
	}
}
