package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/arrowmem"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

// binary builds the command once per test process.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the icerun binary: not in -short")
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "icerun-bin")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "icerun")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

func TestMain(m *testing.M) {
	// In-process commands read their input into memory that is poisoned
	// once released, never reused: a read of a batch after its last
	// Release anywhere on their paths turns into wrong rows the tests see.
	arrowmem.Default = arrowmem.NewPoisoning()
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// exe runs the built binary in dir with env added to a clean environment.
func exe(t *testing.T, dir string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}, env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), o.String(), e.String()
	}
	require.NoError(t, err)
	return 0, o.String(), e.String()
}

func TestBinaryHelp(t *testing.T) {
	dir := t.TempDir()
	code, out, _ := exe(t, dir, nil, "-h")
	require.Equal(t, 0, code)
	for _, c := range commands {
		require.Contains(t, out, "  "+c.name+" ", "top-level help lists %s", c.name)
	}
	code, _, errs := exe(t, dir, nil)
	require.Equal(t, 2, code)
	require.Contains(t, errs, "commands:")

	flags := map[string][]string{
		"replace":     {"-file", "-key", "-code-version", "-catalog", "-warehouse", "-branch"},
		"backfill":    {"-redo", "-keep-snapshots", "-code-version", "-dir"},
		"cleanup":     {"-any-age", "-min-age", "-delete"},
		"create":      {"-schema-from", "-schema", "-partition", "-format-version", "-property"},
		"expire":      {"-older-than", "-retain-last"},
		"drop":        {"-purge"},
		"describe":    {"-snapshots"},
		"plan":        {"-key", "-file"},
		"history":     {"-table"},
		"publish":     {"-branch", "-force"},
		"compact":     {"-key", "-all", "-min-delete-ratio", "-min-small-files"},
		"upsert":      {"-on", "-order-by", "-file", "-branch"},
		"window":      {"-last", "-end", "-late", "-file"},
		"list":        {"-catalog", "-warehouse"},
		"branches":    {"-table"},
		"drop-branch": {"-branch"},
		"version":     {},
		"sink":        {"-brokers", "-topic", "-group", "-commit-interval", "-event-time", "-key"},
	}
	for _, c := range commands {
		code, out, errs := exe(t, dir, nil, c.name, "-h")
		require.Equal(t, 0, code, "%s -h: %s", c.name, errs)
		require.True(t, strings.HasPrefix(out, "usage: icerun "+c.name+" "), "%s -h: %q", c.name, out)
		_, listed := flags[c.name]
		require.True(t, listed, "a flag list for %s", c.name)
		for _, f := range flags[c.name] {
			require.Regexp(t, `(?m)^  `+f+`( |$)`, out, "%s -h shows %s", c.name, f)
		}
		code, _, errs = exe(t, dir, nil, c.name, "-no-such-flag")
		require.Equal(t, 2, code, "%s with a bad flag", c.name)
		require.Equal(t, 1, strings.Count(errs, "\n"), errs)
		require.Contains(t, errs, "-no-such-flag")
	}
	code, out, _ = exe(t, dir, nil, "help", "drop")
	require.Equal(t, 0, code)
	require.Contains(t, out, "-purge")
}

// writeRecord writes rec to path as Parquet.
func writeRecord(t *testing.T, path string, rec arrow.RecordBatch) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, nil, pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
}

// hiveRecord is n orders of day d without event_date (the folder names
// it, as DuckDB's PARTITION_BY writes) and with a column the table lacks.
func hiveRecord(d time.Time, n int) arrow.RecordBatch {
	full := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(d, n))
	defer full.Release()
	fields := slices5(full.Schema().Fields())
	cols := full.Columns()[:5]
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	for range n {
		b.Append("x")
	}
	extra := b.NewArray()
	defer extra.Release()
	fields = append(fields, arrow.Field{Name: "source_system", Type: arrow.BinaryTypes.String})
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), append(append([]arrow.Array{}, cols...), extra), int64(n))
}

func slices5(fs []arrow.Field) []arrow.Field { return append([]arrow.Field{}, fs[:5]...) }

// The table's whole life through the built binary on the embedded catalog.
func TestBinaryLifecycle(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	full := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day, 30))
	writeRecord(t, filepath.Join(in, "full.parquet"), full)
	full.Release()
	for i := range 2 {
		d := day.AddDate(0, 0, -i)
		rec := hiveRecord(d, 20+i)
		writeRecord(t, filepath.Join(in, "hive", "event_date="+d.Format(time.DateOnly), "data_0.parquet"), rec)
		rec.Release()
	}
	icerun := func(want int, args ...string) (string, string) {
		t.Helper()
		code, out, errs := exe(t, dir, nil, args...)
		require.Equal(t, want, code, "icerun %v\nstdout: %s\nstderr: %s", args, out, errs)
		return out, errs
	}

	out, _ := icerun(0, "create", "shop.orders", "-schema-from", filepath.Join(in, "full.parquet"), "-partition", "event_date", "-property", "owner=etl")
	require.Contains(t, out, "created shop.orders")
	icerun(64, "create", "shop.orders", "-schema-from", filepath.Join(in, "full.parquet"))
	icerun(2, "create", "shop.bad", "-schema-from", filepath.Join(in, "full.parquet"), "-partition", "days(nope)")

	out, errs := icerun(0, "replace", "shop.orders", "-key", "event_date=2026-07-14", "-file", filepath.Join(in, "hive", "event_date=2026-07-14"), "-code-version", "v1")
	require.Contains(t, out, "+20 rows in 1 file")
	require.Contains(t, out, "ignored input columns (no table column): source_system")
	require.Contains(t, errs, "filled event_date from the key")
	out, _ = icerun(0, "replace", "shop.orders", "-key", "event_date=2026-07-14", "-file", filepath.Join(in, "hive", "event_date=2026-07-14"), "-code-version", "v1")
	require.Contains(t, out, "unchanged: the partition already holds exactly this input")
	require.NotContains(t, out, "+20 rows", "an unchanged replace does not claim rows")

	// A file of another day: plan says what replace would reject.
	out, errs = icerun(65, "plan", "shop.orders", "-key", "event_date=2026-07-13", "-file", filepath.Join(in, "full.parquet"))
	require.Contains(t, out, "(30 rows)")
	require.Contains(t, errs, "30 of 30 input rows are outside event_date=2026-07-13")
	out, _ = icerun(0, "plan", "shop.orders", "-key", "event_date=2026-07-14", "-file", filepath.Join(in, "hive", "event_date=2026-07-14"))
	require.Contains(t, out, "every input row belongs to event_date=2026-07-14")
	require.Contains(t, out, "ignored input columns (no table column): source_system")

	icerun(0, "backfill", "shop.orders", "-dir", filepath.Join(in, "hive"), "-from", "event_date=2026-07-13", "-to", "event_date=2026-07-14", "-code-version", "v1")

	out, _ = icerun(0, "describe", "shop.orders")
	for _, want := range []string{"1: order_id: optional long", "6: event_date: optional date", "owner=etl", "snapshots: 2", "current snapshot", "41 records"} {
		require.Contains(t, out, want)
	}
	out, errs = icerun(0, "expire", "shop.orders", "-older-than", "0s", "-retain-last", "1")
	require.Contains(t, out, "expired 1 of 2 snapshots; 1 remain")
	require.Contains(t, errs, "expire: ")
	out, _ = icerun(0, "history", "shop.orders", "event_date=2026-07-13")
	require.Contains(t, out, "v1", "lineage kept after expiry")

	cat, err := catalogconfig.OpenLocal(context.Background(), filepath.Join(dir, "warehouse"))
	require.NoError(t, err)
	tbl, err := cat.LoadTable(context.Background(), icetable.Identifier{"shop", "orders"})
	require.NoError(t, err)
	loc := strings.TrimPrefix(tbl.Location(), "file://")
	require.DirExists(t, loc)
	out, _ = icerun(0, "drop", "shop.orders", "-purge")
	require.Contains(t, out, "dropped shop.orders and deleted its files")
	var left []string
	require.NoError(t, filepath.WalkDir(loc, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return err
	}))
	require.Empty(t, left, "purge deletes every file of the table")
	_, errs = icerun(64, "describe", "shop.orders")
	require.Contains(t, errs, "shop.orders")
}

// The binary links the catalog and IO drivers a user can configure
// (docs/cli.md, "Binary size"): the SQL catalog with the SQLite and
// PostgreSQL drivers, REST, local and S3 file IO; the native Glue client
// only with -tags icerun_glue.
func TestLinkedDrivers(t *testing.T) {
	deps := func(tags ...string) string {
		args := append([]string{"list", "-deps"}, tags...)
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	def := deps()
	for _, p := range []string{"github.com/apache/iceberg-go/catalog/sql", "github.com/apache/iceberg-go/catalog/rest", "github.com/apache/iceberg-go/io/gocloud/s3", "github.com/uptrace/bun/driver/pgdriver", "github.com/uptrace/bun/driver/sqliteshim"} {
		require.Contains(t, def, p+"\n")
	}
	require.NotContains(t, def, "github.com/apache/iceberg-go/catalog/glue\n")
	require.Contains(t, deps("-tags", "icerun_glue"), "github.com/apache/iceberg-go/catalog/glue\n")
}
