package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// progress reports a long run on stderr: a live bar on a terminal, plain
// lines otherwise (logs, pipes).
type progress struct {
	out   io.Writer
	label string
	tty   bool
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
