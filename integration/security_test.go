//go:build integration

package integration

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"log"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/table"
)

var (
	labelSchema = iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "label", Type: iceberg.PrimitiveTypes.String},
	)
	labelSpec = iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "label", Transform: iceberg.IdentityTransform{}})
)

// safe partition values look hostile but stay inside the table's data
// folder; unsafe ones would leave it (or cannot be stored) and must be
// refused with table.ErrUnsafePartitionValue before anything is written.
var (
	safe   = []string{"..", "/etc/passwd", "%2e%2e%2f%2e%2e", "..%2F..", "a=b/c=d", "ünï/cødé", "../x"}
	unsafe = []string{"../..", "../../../../../../tmp/escaped", "a/../../b", `..\..\win`, "./.", "/../x", "\x00nul", "ünï/../cødé", strings.Repeat("../", 60) + "deep"}
)

func labelRows(labels []string) array.RecordReader {
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "label", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i, l := range labels {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(l)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, _ := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	return rdr
}

// TestNoPathTraversal writes partitions whose values are traversal
// attempts, statically (one key each) and dynamically, and checks that
// every data file the table references, and every file written, lies under
// the table location, and that the values read back unchanged.
func TestNoPathTraversal(t *testing.T) {
	eachTarget(t, func(t *testing.T, e env) {
		ctx := context.Background()
		cat := e.catalog(t)
		ident := icetable.Identifier{e.NS, "labels"}
		spec := labelSpec
		_, err := cat.CreateTable(ctx, ident, labelSchema, catalog.WithPartitionSpec(&spec))
		require.NoError(t, err)
		w, err := table.Open(ctx, cat, ident)
		require.NoError(t, err)

		rows := labelRows(safe)
		_, err = w.ReplacePartitions(ctx, rows)
		rows.Release()
		require.NoError(t, err, "dynamic replace of safe values")
		for _, v := range safe[:3] {
			k, err := w.Key("label=" + escapeKey(v))
			require.NoError(t, err, "key for %q", v)
			rows := labelRows([]string{v, v})
			_, err = w.ReplacePartition(ctx, k, rows)
			rows.Release()
			require.NoError(t, err, "replace %q", v)
		}
		before, written := scan(t, cat, ident), files(t, cat, ident)
		for _, v := range unsafe {
			k, err := w.Key("label=" + escapeKey(v))
			require.NoError(t, err, "key for %q", v)
			rows := labelRows([]string{v})
			_, err = w.ReplacePartition(ctx, k, rows)
			rows.Release()
			assert.ErrorIs(t, err, table.ErrUnsafePartitionValue, "static replace of %q", v)
			rows = labelRows([]string{"ok", v})
			_, err = w.ReplacePartitions(ctx, rows)
			rows.Release()
			assert.ErrorIs(t, err, table.ErrUnsafePartitionValue, "dynamic replace of %q", v)
		}
		assert.Equal(t, before, scan(t, cat, ident), "refused values changed the table")
		assert.Equal(t, written, files(t, cat, ident), "refused values left files")

		tbl, err := cat.LoadTable(ctx, ident)
		require.NoError(t, err)
		loc := strings.TrimSuffix(tbl.Location(), "/") + "/"
		fsys, err := tbl.FS(ctx)
		require.NoError(t, err)
		refs := mustPlan(t, tbl)
		require.NotEmpty(t, refs)
		for _, p := range refs {
			assert.True(t, strings.HasPrefix(p, loc+"data/"), "data file %s is outside %sdata/", p, loc)
			assert.NotContains(t, "/"+strings.TrimPrefix(p, loc)+"/", "/../", "data file %s has a .. segment", p)
		}
		// Everything written is under the location: list the warehouse root
		// (the parent of the namespace folder) for files of a "label="
		// partition (no other test table has one) outside it.
		root := loc[:strings.LastIndex(strings.TrimSuffix(loc, "/"), "/")+1]
		root = root[:strings.LastIndex(strings.TrimSuffix(root, "/"), "/")+1]
		var outside []string
		if l, ok := fsys.(iceio.ListableIO); ok {
			_ = l.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") && strings.Contains(p, "label=") && !strings.HasPrefix(normalize(p), normalize(loc)) {
					outside = append(outside, p)
				}
				return nil
			})
		}
		assert.Empty(t, outside, "parquet files outside the table location %s", loc)

		got := map[string]bool{}
		for _, line := range lines(scan(t, cat, ident)) {
			cells := bytes.SplitN(line, []byte("|"), 2)
			got[string(cells[1])] = true
		}
		for _, v := range safe {
			assert.True(t, got[v], "value %q did not read back", v)
		}
	})
}

func normalize(p string) string { return strings.TrimPrefix(p, "file://") }

// escapeKey writes v as a key value (partition's escaping).
func escapeKey(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '%' || c == '/' || c == '=' || c == ',' || c < 0x20 || c >= 0x7f {
			b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func mustPlan(t *testing.T, tbl *icetable.Table) []string {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	require.NoError(t, err)
	var out []string
	for _, task := range tasks {
		out = append(out, task.File.FilePath())
	}
	return out
}

// secretsOf lists the secret values of the environment's properties.
func secretsOf(e env) []string {
	var out []string
	for k, v := range e.Props {
		if v != "" && (strings.Contains(k, "secret") || strings.Contains(k, "password") || k == "token" || k == "credential") {
			out = append(out, v)
		}
	}
	if u, err := url.Parse(e.Props["uri"]); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	return out
}

// TestSecretsNeverLeak runs successful and failing replacements with
// secrets in the catalog and storage properties (the target's own, plus a
// planted one), captures every error, the standard and slog loggers, and
// every snapshot summary, table property and metadata file, and greps them
// for the secrets.
func TestSecretsNeverLeak(t *testing.T) {
	eachTarget(t, func(t *testing.T, e env) {
		ctx := context.Background()
		const planted = "planted-Secret-9f8e7d"
		if _, ok := e.Props[iceio.S3SecretAccessKey]; !ok {
			e.Props = merge(e.Props, iceberg.Properties{iceio.S3SecretAccessKey: planted, iceio.S3AccessKeyID: "planted-key"})
		}
		secrets := secretsOf(e)
		require.NotEmpty(t, secrets)

		var logs bytes.Buffer
		prevLog, prevSlog := log.Writer(), slog.Default()
		log.SetOutput(io.MultiWriter(&logs, prevLog))
		slog.SetDefault(slog.New(slog.NewTextHandler(io.MultiWriter(&logs, os.Stderr), &slog.HandlerOptions{Level: slog.LevelDebug})))
		defer func() { log.SetOutput(prevLog); slog.SetDefault(prevSlog) }()

		cat := e.catalog(t)
		ident := e.ordersTable(t, cat, "orders")
		w, err := table.Open(ctx, cat, ident, table.WithRunID("run-1"), table.WithCodeVersion("v1"))
		require.NoError(t, err)
		replaceDay(t, w, day0, 1, 50)
		var errs []error
		k, err := w.Key("event_date=" + day0)
		require.NoError(t, err)
		rows := orderdata.Reader(append(tagged(day0, 1, 5), tagged(days(2)[1], 1, 1)...), 10)
		_, err = w.ReplacePartition(ctx, k, rows) // row outside the key
		rows.Release()
		errs = append(errs, err)
		_, err = table.Open(ctx, cat, icetable.Identifier{e.NS, "missing"})
		errs = append(errs, err)
		_, err = w.Key("event_date=2026-13-45")
		errs = append(errs, err)

		// Wrong credentials: the storage or the catalog refuses them; the
		// error must not echo the (wrong) secret either.
		bad := env{Target: e.Target, NS: e.NS, Props: merge(e.Props)}
		const wrong = "wrong-Secret-1a2b3c"
		if _, ok := bad.Props[iceio.S3EndpointURL]; ok {
			bad.Props[iceio.S3SecretAccessKey] = wrong
		}
		if u, err := url.Parse(bad.Props["uri"]); err == nil && u.User != nil {
			u.User = url.UserPassword(u.User.Username(), wrong)
			bad.Props["uri"] = u.String()
		}
		if bcat, err := bad.open(ctx); err != nil {
			errs = append(errs, err)
		} else {
			bw, err := table.Open(ctx, bcat, ident)
			errs = append(errs, err)
			if err == nil {
				rows := orderdata.Reader(tagged(day0, 2, 5), 10)
				_, err = bw.ReplacePartition(ctx, k, rows)
				rows.Release()
				errs = append(errs, err)
			}
		}
		secrets = append(secrets, wrong)

		var text strings.Builder
		for _, err := range errs {
			if err != nil {
				text.WriteString(err.Error() + "\n")
			}
		}
		require.NotZero(t, text.Len(), "no error was produced")
		text.Write(logs.Bytes())
		tbl, err := cat.LoadTable(ctx, ident)
		require.NoError(t, err)
		for _, s := range tbl.Metadata().Snapshots() {
			if s.Summary != nil {
				for k, v := range s.Summary.Properties {
					text.WriteString(k + "=" + v + "\n")
				}
			}
		}
		for k, v := range tbl.Properties() {
			text.WriteString(k + "=" + v + "\n")
		}
		fsys, err := tbl.FS(ctx)
		require.NoError(t, err)
		var metaFiles int
		for _, f := range files(t, cat, ident) {
			if strings.Contains(f, "/metadata/") {
				r, err := fsys.(iceio.ReadFileIO).ReadFile(f)
				require.NoError(t, err)
				text.Write(r)
				metaFiles++
			}
		}
		for _, s := range secrets {
			assert.NotContains(t, text.String(), s, "a secret leaked into errors, logs, summaries or metadata")
		}
		t.Logf("%s: grepped %d errors, %d bytes of logs, %d snapshots, %d metadata files for %d secrets", e.Target, len(slices.DeleteFunc(errs, func(e error) bool { return e == nil })), logs.Len(), len(tbl.Metadata().Snapshots()), metaFiles, len(secrets))
	})
}
