package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/icerun/icerun/backfill"
)

// Environment of a sharded backfill: the index a Kubernetes Indexed Job
// gives each pod, and the shard count, which Kubernetes does not export
// (set it to the Job's completions).
const (
	envShardIndex = "JOB_COMPLETION_INDEX"
	envShardCount = "ICERUN_SHARDS"
	envShard      = "ICERUN_SHARD" // default of -shard, "i/n"
)

// shardFlags are backfill's -shard i/n and -shards-from-env.
type shardFlags struct {
	text    string
	fromEnv bool
	i, n    int // after resolve; n == 0 when the run is not sharded
}

func newShardFlags(fs *flag.FlagSet) *shardFlags {
	s := &shardFlags{}
	fs.StringVar(&s.text, "shard", os.Getenv(envShard), "run only shard i of n of the keys, as i/n with 0 <= i < n ("+envShard+")")
	fs.BoolVar(&s.fromEnv, "shards-from-env", false, "take the shard index from "+envShardIndex+" (Kubernetes Indexed Job) and the count from "+envShardCount)
	return s
}

// options resolves the flags (getenv reads the environment) into the
// backfill options: none when the run is not sharded.
func (s *shardFlags) options(getenv func(string) string) ([]backfill.Option, error) {
	var err error
	switch {
	case s.fromEnv && s.text != "":
		return nil, fmt.Errorf("%w: -shard %q and -shards-from-env: give one", errUsage, s.text)
	case s.fromEnv:
		idx, cnt := getenv(envShardIndex), getenv(envShardCount)
		if idx == "" || cnt == "" {
			return nil, fmt.Errorf("%w: -shards-from-env needs %s and %s, got %q and %q", errUsage, envShardIndex, envShardCount, idx, cnt)
		}
		s.i, s.n, err = parseShard(idx, cnt)
	case s.text != "":
		idx, cnt, ok := strings.Cut(s.text, "/")
		if !ok {
			return nil, fmt.Errorf("%w: -shard %q: want i/n, e.g. 0/4", errUsage, s.text)
		}
		s.i, s.n, err = parseShard(idx, cnt)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return []backfill.Option{backfill.WithShard(s.i, s.n)}, nil
}

func parseShard(idx, cnt string) (i, n int, err error) {
	i, err1 := strconv.Atoi(strings.TrimSpace(idx))
	n, err2 := strconv.Atoi(strings.TrimSpace(cnt))
	if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("%w: shard %q of %q: want integers 0 <= i < n", errUsage, idx, cnt)
	}
	return i, n, nil
}

// report prints the shard and the concurrency figures of the run.
func (s *shardFlags) report(out io.Writer, rep backfill.Report) {
	if s.n > 0 {
		fmt.Fprintf(out, "shard %d/%d: %d keys of this shard; ", s.i, s.n, rep.Total)
	}
	fmt.Fprintf(out, "%d commit conflicts re-planned, %d retries\n", rep.Conflicts, rep.Retries)
}
