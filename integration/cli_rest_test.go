//go:build integration

package integration

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
)

// writeDay writes n orders of day to path as Parquet.
func writeDay(t testing.TB, path string, day time.Time, n int) {
	t.Helper()
	rec := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day, n))
	defer rec.Release()
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, pqarrow.WriteTable(tbl, f, 1024, nil, pqarrow.DefaultWriterProps()))
}

// TestCLIOnREST runs the command against the REST catalog (Apache
// Iceberg's RESTCatalogServer under scripts/integration rest), configured
// only by ICERUN_CATALOG__ variables: create -> replace -> backfill ->
// replace -branch -> publish -> expire -> describe -> drop -purge. Every
// command that commits sets main's or a branch's ref through the server,
// which validates it.
func TestCLIOnREST(t *testing.T) {
	uri := os.Getenv("ICERUN_REST_URI")
	if uri == "" {
		if required("rest") {
			t.Fatal("ICERUN_REST_URI is not set")
		}
		t.Skip("ICERUN_REST_URI is not set (scripts/integration rest)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "icerun")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/icerun").CombinedOutput()
	require.NoError(t, err, "%s", out)
	env := []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "ICERUN_CATALOG=prod"}
	for k, v := range restProps(uri) {
		env = append(env, "ICERUN_CATALOG__PROD__"+catalogEnvKey(k)+"="+v)
	}

	d0 := mustDay(day0)
	writeDay(t, filepath.Join(dir, "day.parquet"), d0, 40)
	writeDay(t, filepath.Join(dir, "day1.parquet"), d0.AddDate(0, 0, 1), 40)
	for i := range 3 {
		d := d0.AddDate(0, 0, i)
		writeDay(t, filepath.Join(dir, "in", "event_date="+d.Format(time.DateOnly), "part-0.parquet"), d, 10+i)
	}

	name := "cli_" + randomID() + ".orders"
	icerun := func(want int, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		require.Equal(t, want, code, "icerun %v\nstdout: %s\nstderr: %s", args, o.String(), e.String())
		return o.String() + e.String()
	}
	icerun(0, "create", name, "-schema-from", "day.parquet", "-partition", "event_date")
	require.Contains(t, icerun(0, "replace", name, "-key", "event_date=2026-07-14", "-file", "day.parquet"), "+40 rows")
	icerun(0, "backfill", name, "-dir", "in", "-from", "event_date=2026-07-14", "-to", "event_date=2026-07-16")
	require.Contains(t, icerun(0, "replace", name, "-key", "event_date=2026-07-15", "-file", "day1.parquet", "-branch", "audit"), "+40 rows")
	icerun(0, "publish", name, "-branch", "audit")
	require.Contains(t, icerun(0, "describe", name), "62 records") // 10 + 40 + 12
	icerun(0, "expire", name, "-older-than", "0s", "-retain-last", "1")
	require.Contains(t, icerun(0, "describe", name), "62 records")
	icerun(0, "drop", name, "-purge")
	icerun(64, "describe", name) // a missing table: the request does not fit (docs/cli.md, exit codes)
}

// catalogEnvKey is the ICERUN_CATALOG__<NAME>__<KEY> spelling of a
// property key (PyIceberg's rule: "." is "__", "-" is "_").
func catalogEnvKey(k string) string {
	var b []byte
	for _, c := range []byte(k) {
		switch {
		case c == '.':
			b = append(b, '_', '_')
		case c == '-':
			b = append(b, '_')
		case c >= 'a' && c <= 'z':
			b = append(b, c-'a'+'A')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}
