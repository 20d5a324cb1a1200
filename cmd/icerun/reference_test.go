package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md's generated reference")

// cliDoc is the CLI documentation, from this package's folder.
var cliDoc = filepath.Join("..", "..", "docs", "cli.md")

const (
	beginRef = "<!-- BEGIN GENERATED: go generate ./cmd/icerun (TestCLIReference checks it is current); do not edit -->\n"
	endRef   = "<!-- END GENERATED -->\n"
)

// reference is the help of icerun and of every command, as Markdown,
// with the defaults an empty environment gives.
func reference(t *testing.T) string {
	for _, k := range []string{"ICERUN_WAREHOUSE", "ICERUN_CATALOG", "ICERUN_TABLE", "ICERUN_RUN_ID", "ICERUN_CODE_VERSION", "ICERUN_LOG_FORMAT", envShard} {
		t.Setenv(k, "")
	}
	var b bytes.Buffer
	help := func(args ...string) {
		code, out, errs := icerun(args...)
		require.Equal(t, 0, code, errs)
		b.WriteString("```text\n" + strings.TrimRight(out, "\n") + "\n```\n")
	}
	b.WriteString("### icerun -h\n\n")
	help("-h")
	for _, c := range commands {
		b.WriteString("\n### icerun " + c.name + "\n\n")
		help(c.name, "-h")
	}
	return b.String()
}

// docs/cli.md's reference is the commands' own help: this test fails when
// the help changed and the doc was not regenerated (go generate
// ./cmd/icerun, or go test ./cmd/icerun -run TestCLIReference -update).
func TestCLIReference(t *testing.T) {
	raw, err := os.ReadFile(cliDoc)
	require.NoError(t, err)
	doc := string(raw)
	head, rest, ok := strings.Cut(doc, beginRef)
	require.True(t, ok, "docs/cli.md has the BEGIN GENERATED marker")
	_, tail, ok := strings.Cut(rest, endRef)
	require.True(t, ok, "docs/cli.md has the END GENERATED marker")
	want := head + beginRef + reference(t) + endRef + tail
	if *update {
		require.NoError(t, os.WriteFile(cliDoc, []byte(want), 0o644))
		return
	}
	require.Equal(t, want, doc, "docs/cli.md's reference is stale: run go generate ./cmd/icerun")
}
