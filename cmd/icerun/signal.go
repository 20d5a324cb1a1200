package main

import (
	"context"
	"fmt"
	"log/slog"
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

// stopping is what the first signal prints (after "icerun: SIGTERM: ")
// for a run of args.
func stopping(args []string) string {
	if len(args) > 0 && args[0] == "sink" {
		return "committing the pending rows, then leaving the group (send it again to exit at once: the rows not committed are read again from Kafka by the next run)"
	}
	return "stopping after the work in flight is abandoned and removed (send it again to exit at once)"
}

// notifySignals returns a context cancelled, with an interruption as its
// cause, by the first SIGINT or SIGTERM (what Kubernetes, systemd and
// most schedulers send), which prints "icerun: SIG: " and what.
// A batch command abandons what is in flight, removes what it staged and
// prints its summary; the sink commits what is pending and exits 0. A
// second signal exits at once.
//
// With log (the run's -log-format logger) the note is an INFO record.
func notifySignals(parent context.Context, what string, log *slog.Logger) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			if log != nil {
				log.Info("icerun: "+signalName(s)+": "+what, slog.String("signal", signalName(s)))
			} else {
				fmt.Fprintf(os.Stderr, "icerun: %s: %s\n", signalName(s), what)
			}
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
