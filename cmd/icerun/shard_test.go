package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal"
	"github.com/icerun/icerun/table"
)

func TestShardFlags(t *testing.T) {
	k8s := map[string]string{envShardIndex: "2", envShardCount: "4"}
	for _, tc := range []struct {
		args    []string
		env     map[string]string
		i, n    int // n == 0: not sharded
		wantErr bool
	}{
		{args: nil},
		{args: []string{"-shard", "1/4"}, i: 1, n: 4},
		{args: []string{"-shard", "0/1"}, i: 0, n: 1},
		{args: []string{"-shards-from-env"}, env: k8s, i: 2, n: 4},
		{args: nil, env: map[string]string{envShard: "3/8"}, i: 3, n: 8},
		{args: nil, env: k8s}, // the index alone shards nothing
		{args: []string{"-shard", "4/4"}, wantErr: true},
		{args: []string{"-shard", "-1/4"}, wantErr: true},
		{args: []string{"-shard", "1/0"}, wantErr: true},
		{args: []string{"-shard", "1"}, wantErr: true},
		{args: []string{"-shard", "a/b"}, wantErr: true},
		{args: []string{"-shards-from-env"}, wantErr: true},
		{args: []string{"-shards-from-env"}, env: map[string]string{envShardIndex: "0"}, wantErr: true},
		{args: []string{"-shards-from-env"}, env: map[string]string{envShardIndex: "4", envShardCount: "4"}, wantErr: true},
		{args: []string{"-shards-from-env", "-shard", "1/4"}, env: k8s, wantErr: true},
	} {
		t.Run(fmt.Sprint(tc.args, tc.env), func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v) // the -shard default reads the environment
			}
			fs := flag.NewFlagSet("backfill", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			s := newShardFlags(fs)
			require.NoError(t, fs.Parse(tc.args))
			opts, err := s.options(func(k string) string { return tc.env[k] })
			if tc.wantErr {
				require.ErrorIs(t, err, errUsage)
				return
			}
			require.NoError(t, err)
			require.Equal(t, [2]int{tc.i, tc.n}, [2]int{s.i, s.n})
			require.Len(t, opts, min(tc.n, 1))
		})
	}
}

// TestShardedBackfill runs `icerun backfill -shard i/3` three times over
// the same range, then the same range as two Indexed Job pods
// (-shards-from-env): every key is written once, by its shard, and the
// second layout skips them all.
func TestShardedBackfill(t *testing.T) {
	wh := warehouse(t)
	in := t.TempDir()
	const days = 12
	for i := range days {
		d := day.AddDate(0, 0, -i)
		parquetFile(t, filepath.Join(in, "event_date="+d.Format(time.DateOnly), "part-0.parquet"), d, 5+i)
	}
	common := []string{"-warehouse", wh, "-table", "db.fact_orders", "-code-version", "v1", "-dir", in,
		"-from", "event_date=" + day.AddDate(0, 0, -days+1).Format(time.DateOnly), "-to", "event_date=2026-07-14", "-keys-per-snapshot", "2"}
	summary := regexp.MustCompile(`(\d+) keys: (\d+) written, 0 unchanged, (\d+) skipped, 0 failed`)
	written := 0
	for i := range 3 {
		code, out, errs := icerun(append([]string{"backfill", "-shard", fmt.Sprintf("%d/3", i)}, common...)...)
		require.Equal(t, 0, code, errs)
		require.Contains(t, out, fmt.Sprintf("shard %d/3: ", i))
		m := summary.FindStringSubmatch(out)
		require.NotNil(t, m, out)
		require.Equal(t, m[1], m[2], "shard %d writes its keys: %s", i, out)
		n, _ := strconv.Atoi(m[2])
		written += n
	}
	require.Equal(t, days, written, "the shards cover the range once")

	cat, err := internal.OpenSQLite(context.Background(), wh)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(context.Background(), icetable.Identifier{"db", "fact_orders"})
	require.NoError(t, err)
	for i := range days {
		k := "event_date=" + day.AddDate(0, 0, -i).Format(time.DateOnly)
		require.Len(t, table.History(tbl, k), 1, k)
	}

	t.Setenv(envShardCount, "2")
	skipped := 0
	for i := range 2 {
		t.Setenv(envShardIndex, strconv.Itoa(i))
		code, out, errs := icerun(append([]string{"backfill", "-shards-from-env"}, common...)...)
		require.Equal(t, 0, code, errs)
		m := summary.FindStringSubmatch(out)
		require.NotNil(t, m, out)
		require.Equal(t, m[1], m[3], "pod %d skips every key of its shard: %s", i, out)
		n, _ := strconv.Atoi(m[3])
		skipped += n
	}
	require.Equal(t, days, skipped)

	code, _, errs := icerun(append([]string{"backfill", "-shard", "3/3"}, common...)...)
	require.Equal(t, 2, code, "a bad shard is a usage error: %s", errs)
}
