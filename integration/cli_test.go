//go:build integration

package integration

import (
	"bytes"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
)

// The command on PostgreSQL + S3, configured only through a config file
// and ICERUN_CATALOG__ variables: create -> replace -> describe -> expire
// -> drop -purge, with no secret in any output.
func TestCLIOnPostgresAndS3(t *testing.T) {
	pg, endpoint := os.Getenv("ICERUN_PG_URI"), os.Getenv("ICERUN_S3_ENDPOINT")
	if pg == "" || endpoint == "" {
		if required("pg+s3") {
			t.Fatal("ICERUN_PG_URI or ICERUN_S3_ENDPOINT is not set")
		}
		t.Skip("ICERUN_PG_URI or ICERUN_S3_ENDPOINT is not set (scripts/integration pg s3)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "icerun")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/icerun").CombinedOutput()
	require.NoError(t, err, "%s", out)

	// The file holds the shape; the secrets come from the environment.
	u, err := url.Parse(pg)
	require.NoError(t, err)
	pgPassword, _ := u.User.Password()
	cfg := "catalog:\n  prod:\n    uri: " + strings.Replace(pg, ":"+pgPassword+"@", "@", 1) +
		"\n    warehouse: " + s3Warehouse() + "\n    s3:\n      endpoint: " + endpoint + "\n      region: " + os.Getenv("ICERUN_S3_REGION") + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "icerun.yaml"), []byte(cfg), 0o600))
	env := []string{
		"HOME=" + dir, "PATH=" + os.Getenv("PATH"),
		"ICERUN_CONFIG=" + filepath.Join(dir, "icerun.yaml"),
		"ICERUN_CATALOG=prod",
		"ICERUN_CATALOG__PROD__URI=" + pg,
		"ICERUN_CATALOG__PROD__S3__ACCESS_KEY_ID=" + os.Getenv("ICERUN_S3_ACCESS_KEY"),
		"ICERUN_CATALOG__PROD__S3__SECRET_ACCESS_KEY=" + os.Getenv("ICERUN_S3_SECRET_KEY"),
	}
	secrets := []string{os.Getenv("ICERUN_S3_SECRET_KEY")}
	if pgPassword != "" {
		secrets = append(secrets, pgPassword)
	}

	day := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	rec := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day, 40))
	defer rec.Release()
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	f, err := os.Create(filepath.Join(dir, "day.parquet"))
	require.NoError(t, err)
	require.NoError(t, pqarrow.WriteTable(tbl, f, 1024, nil, pqarrow.DefaultWriterProps()))

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
		for _, s := range secrets {
			require.NotContains(t, o.String()+e.String(), s, "a secret in the output of %v", args)
		}
		require.Equal(t, want, code, "icerun %v\nstdout: %s\nstderr: %s", args, o.String(), e.String())
		return o.String()
	}
	require.Contains(t, icerun(0, "create", name, "-schema-from", "day.parquet", "-partition", "event_date"), "s3://")
	require.Contains(t, icerun(0, "replace", name, "-key", "event_date=2026-07-14", "-file", "day.parquet"), "+40 rows in 1 file")
	require.Contains(t, icerun(0, "replace", name, "-key", "event_date=2026-07-14", "-file", "day.parquet", "-code-version", "v2"), "+40 rows")
	desc := icerun(0, "describe", name)
	require.Contains(t, desc, "snapshots: 2")
	require.Contains(t, desc, "40 records")
	require.Contains(t, icerun(0, "expire", name, "-older-than", "0s", "-retain-last", "1"), "1 remain")
	require.Contains(t, icerun(0, "history", name, "event_date=2026-07-14"), "v2")
	require.Contains(t, icerun(0, "drop", name, "-purge"), "deleted its files")
	icerun(64, "describe", name) // no such table: exit 64

	// A wrong password: the error says so, without the secrets.
	env = append(env, "ICERUN_CATALOG__PROD__URI="+strings.Replace(pg, ":"+pgPassword+"@", ":wrong-"+pgPassword+"@", 1))
	icerun(78, "describe", name) // the catalog refused the credentials: exit 78
}
