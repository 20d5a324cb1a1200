package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// testSinkFlags is a flag set with a flag of each kind the sink has.
func testSinkFlags() (*flag.FlagSet, *string, *bool, *time.Duration, *int64, *stringList) {
	fs := flag.NewFlagSet("sink", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s := fs.String("topic", "", "")
	b := fs.Bool("evolve", false, "")
	d := fs.Duration("commit-interval", time.Second, "")
	n := fs.Int64("commit-rows", 10, "")
	var l stringList
	fs.Var(&l, "skip", "")
	return fs, s, b, d, n, &l
}

func TestSinkSettings(t *testing.T) {
	file := []byte("catalog:\n  prod:\n    uri: x\nsink:\n  topic: from-file\n  commit-rows: 7\n  evolve: true\n  skip: [a/0@1, a/1@2]\n")
	fs, topic, evolve, interval, rows, skip := testSinkFlags()
	environ := []string{"HOME=/x", "ICERUN_SINK_TOPIC=a,b", "ICERUN_SINK_COMMIT_INTERVAL=3s", envSASLPassword + "=pw", "ICERUN_TABLE=db.t"}
	s, err := loadSinkSettings(fs, environ, "cfg.yaml", file)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.apply(fs); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"-commit-rows", "9"}); err != nil {
		t.Fatal(err)
	}
	if *topic != "a,b" || !*evolve || *interval != 3*time.Second || *rows != 9 || !slices.Equal(*skip, []string{"a/0@1", "a/1@2"}) {
		t.Errorf("flags = topic %q, evolve %v, interval %s, rows %d, skip %q; want the variable over the file, the command line over both",
			*topic, *evolve, *interval, *rows, *skip)
	}
	fs, _, _, _, _, skip = testSinkFlags()
	s, err = loadSinkSettings(fs, []string{"ICERUN_SINK_SKIP=a/0@1,b/2@3"}, "cfg.yaml", file)
	if err == nil {
		err = s.apply(fs)
	}
	if err != nil || !slices.Equal(*skip, []string{"a/0@1", "b/2@3"}) {
		t.Errorf("ICERUN_SINK_SKIP: %q, %v; want its comma list", *skip, err)
	}

	bad := []struct {
		environ []string
		file    string
		want    string
	}{
		{[]string{"ICERUN_SINK_TOPICS=a"}, "", "variable ICERUN_SINK_TOPICS: icerun sink has no flag it names"},
		{nil, "sink:\n  topics: a\n", "cfg.yaml: sink.topics: icerun sink has no flag -topics"},
		{nil, "sink: [a]\n", "want a map of flag names"},
		{nil, "sink:\n  topic: {a: 1}\n", "not a map"},
		{nil, "sink: [\n", "cfg.yaml"},
		{[]string{"ICERUN_SINK_COMMIT_ROWS=many"}, "", "-commit-rows from variable ICERUN_SINK_COMMIT_ROWS"},
		{nil, "sink:\n  commit-interval: soon\n", "-commit-interval from cfg.yaml: sink.commit-interval"},
	}
	for _, tc := range bad {
		fs, _, _, _, _, _ := testSinkFlags()
		s, err := loadSinkSettings(fs, tc.environ, "cfg.yaml", []byte(tc.file))
		if err == nil {
			err = s.apply(fs)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("settings %q, %q = %v, want an error with %q", tc.environ, tc.file, err, tc.want)
		}
	}
}

// sinkFlagNames are the flags `icerun sink -h` lists.
func sinkFlagNames(t *testing.T) []string {
	t.Helper()
	code, out, errs := icerun("sink", "-h")
	if code != 0 {
		t.Fatalf("icerun sink -h = %d: %s", code, errs)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(out, -1) {
		names = append(names, m[1])
	}
	if len(names) < 30 {
		t.Fatalf("icerun sink -h lists %d flags: %v", len(names), names)
	}
	return names
}

// Every flag of icerun sink has its variable: a value there reaches the
// flag, never "no flag it names"; a value "x" is refused, naming the flag
// and the variable, by every flag that is not a string (the strings are
// checked by TestSinkFlagsFromEnvironmentAndFile).
func TestEverySinkFlagHasAVariable(t *testing.T) {
	refused := 0
	for _, name := range sinkFlagNames(t) {
		v := sinkEnvName(name)
		t.Run(name, func(t *testing.T) {
			t.Setenv(v, "x")
			_, _, errs := icerun("sink", "-h")
			switch {
			case strings.Contains(errs, "-"+name+" from variable "+v):
				refused++
			case errs != "":
				t.Errorf("%s=x: %s", v, errs)
			}
		})
	}
	if refused < 10 {
		t.Errorf("%d flags refused x from their variable, want the bool, number and duration flags (10 or more)", refused)
	}
}

// The sink's connection flags from the environment and from the config
// file: the sink tries the brokers they name and gives up at the
// -connect-timeout they give (exit 75).
func TestSinkFlagsFromEnvironmentAndFile(t *testing.T) {
	wh := warehouse(t)
	t.Setenv("ICERUN_KAFKA_BROKERS", "")
	t.Setenv(sinkEnvName("brokers"), unreachable)
	t.Setenv(sinkEnvName("topic"), "t")
	t.Setenv(sinkEnvName("group"), "g")
	t.Setenv(sinkEnvName("connect-timeout"), "1s")
	t.Setenv("ICERUN_CONFIG", filepath.Join(t.TempDir(), "none.yaml"))
	if code, _, errs := icerun("sink", "db.fact_orders", "-warehouse", wh); code != exitUsage || !strings.Contains(errs, "none.yaml") {
		t.Errorf("a missing $ICERUN_CONFIG = %d, %s; want %d naming it", code, errs, exitUsage)
	}
	cfg := filepath.Join(t.TempDir(), "icerun.yaml")
	if err := os.WriteFile(cfg, []byte("sink:\n  connect-timeout: 1s\n  brokers: 127.0.0.1:2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ICERUN_CONFIG", cfg)
	for _, tc := range []struct {
		unset, brokers string
	}{{"", unreachable}, {sinkEnvName("brokers"), "127.0.0.1:2"}} {
		if tc.unset != "" {
			os.Unsetenv(tc.unset)
		}
		start := time.Now()
		code, _, errs := icerun("sink", "db.fact_orders", "-warehouse", wh)
		if code != exitRetry || !strings.Contains(errs, "brokers "+tc.brokers+" unreachable") || time.Since(start) > 6*time.Second {
			t.Errorf("icerun sink from the environment (%s unset) = %d after %s, want %d naming %s:\n%s", tc.unset, code, time.Since(start), exitRetry, tc.brokers, errs)
		}
	}
}

// The topic and -skip flags are checked before the brokers are tried.
func TestSinkTopicAndSkipUsage(t *testing.T) {
	wh := warehouse(t)
	base := []string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-group", "g"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-topic", "a", "-topic-regex", "a.*"}, "one of -topic and -topic-regex"},
		{[]string{"-topic-regex", "("}, `topic regex "("`},
		{[]string{"-topic", "a,b", "-skip", "a/0"}, "want TOPIC/PARTITION@OFFSET"},
		{[]string{"-topic", "a,b", "-skip", "a/0@1", "-skip", "c/0@1"}, `-skip c/0@1: the sink does not consume topic "c"`},
		{[]string{"-topic-regex", "orders\\..*", "-skip", "orders/0@1"}, `does not consume topic "orders"`},
	} {
		code, _, errs := icerun(append(base, tc.args...)...)
		if code != exitUsage || !strings.Contains(unquoted(errs), tc.want) {
			t.Errorf("icerun sink %s = %d, %s; want %d with %q", strings.Join(tc.args, " "), code, errs, exitUsage, tc.want)
		}
	}
}
