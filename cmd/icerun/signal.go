package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// interruption is the cause of a context cancelled by a signal.
type interruption struct{ sig os.Signal }

func (i interruption) Error() string { return fmt.Sprintf("stopped by %s", signalName(i.sig)) }

// code is the exit code of a run stopped by the signal: 128 + its number.
func (i interruption) code() int {
	if i.sig == syscall.SIGTERM {
		return exitTerminated
	}
	return exitInterrupted
}

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case os.Interrupt:
		return "SIGINT"
	}
	return s.String()
}

// notifySignals returns a context cancelled, with an interruption as its
// cause, by the first SIGINT or SIGTERM (what Kubernetes, systemd and
// most schedulers send): the command abandons what is in flight, removes
// what it staged and prints its summary. A second signal exits at once.
func notifySignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			fmt.Fprintf(os.Stderr, "icerun: %s: stopping after the work in flight is abandoned and removed (send it again to exit at once)\n", signalName(s))
			cancel(interruption{s})
		case <-done:
			return
		}
		select {
		case s := <-ch:
			os.Exit(interruption{s}.code())
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}
