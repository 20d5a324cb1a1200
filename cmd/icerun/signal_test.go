package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
)

// SIGTERM (what Kubernetes and systemd send) stops a backfill as SIGINT
// does: the run abandons what is in flight, removes what it staged,
// prints its summary with the table's real metadata figures and exits
// 143; the rerun finishes the job.
func TestBackfillSIGTERM(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) { backfillStopped(t, sig) })
	}
}

func backfillStopped(t *testing.T, sig syscall.Signal) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	const days = 12
	for i := range days {
		d := day.AddDate(0, 0, i)
		rec := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(d, 40_000))
		writeRecord(t, filepath.Join(in, "event_date="+d.Format(time.DateOnly), "data_0.parquet"), rec)
		rec.Release()
	}
	code, _, errs := exe(t, dir, nil, "create", "shop.orders", "-schema-from", filepath.Join(in, "event_date=2026-07-14"), "-partition", "event_date")
	require.Equal(t, 0, code, errs)

	cmd := exec.Command(binary(t), "backfill", "shop.orders", "-dir", in, "-from", "event_date=2026-07-14", "-to", "event_date=2026-07-25")
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir}
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stderr)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.HasPrefix(sc.Text(), "backfill: 2/") {
			require.NoError(t, cmd.Process.Signal(sig))
			break
		}
	}
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	err = cmd.Wait()
	code = cmd.ProcessState.ExitCode()
	want := map[syscall.Signal]int{syscall.SIGTERM: exitTerminated, syscall.SIGINT: exitInterrupted}[sig]
	require.Equal(t, want, code, "exit code after %v (err %v)\nstdout: %s\nstderr: %s", sig, err, out.String(), strings.Join(lines, "\n"))
	require.Contains(t, strings.Join(lines, "\n"), "stopping after the work in flight is abandoned")
	m := regexp.MustCompile(`metadata after:  (\d+) snapshots`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "the summary is printed: %s", out.String())
	snaps, _ := strconv.Atoi(m[1])
	require.GreaterOrEqual(t, snaps, 2, "the summary counts the table's snapshots: %s", out.String())

	code, out2, errs := exe(t, dir, nil, "cleanup", "shop.orders", "-any-age")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out2, "would remove 0 orphan files", "the stopped run left no file behind")

	code, out2, errs = exe(t, dir, nil, "backfill", "shop.orders", "-dir", in, "-from", "event_date=2026-07-14", "-to", "event_date=2026-07-25")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out2, strconv.Itoa(days)+" keys: ")
	require.Contains(t, out2, "0 failed")
}
