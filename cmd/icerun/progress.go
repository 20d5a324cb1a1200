package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// progress reports a long run on stderr: a record of the -log-format
// logger, or with none a live bar on a terminal and plain lines otherwise
// (pipes).
type progress struct {
	out   io.Writer
	log   *slog.Logger // nil: plain
	label string
	tty   bool
}

// progress is the progress of the command's run, reported as label.
func (e *env) progress(label string) *progress {
	p := newProgress(e.err, label)
	p.log, _ = e.logger()
	return p
}

func newProgress(out io.Writer, label string) *progress {
	p := &progress{out: out, label: label}
	if f, ok := out.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// update reports done of total with a line of text.
func (p *progress) update(done, total int, line string) {
	if p.log != nil {
		p.log.Info(p.label+": "+line, slog.String("command", p.label), slog.Int("done", done), slog.Int("total", total))
		return
	}
	if !p.tty {
		fmt.Fprintf(p.out, "%s: %s\n", p.label, line)
		return
	}
	const width = 30
	n := width * min(done, total) / max(total, 1)
	fmt.Fprintf(p.out, "\r%s [%s%s] %s ", p.label, strings.Repeat("#", n), strings.Repeat(".", width-n), line)
	if done >= total {
		fmt.Fprintln(p.out)
	}
}
