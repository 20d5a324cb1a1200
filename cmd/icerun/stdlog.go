package main

import (
	"log"
	"log/slog"
	"strings"
)

// routeStdLog sends what the standard log package prints (iceberg-go
// logs its warnings through it, such as "Warning: Failed to delete old
// metadata file ...") to logger, as WARN records with source=iceberg-go,
// so that a long-running command logs in one format on one stream. The
// returned function restores the log package's previous output.
func routeStdLog(logger *slog.Logger) (restore func()) {
	out, flags := log.Writer(), log.Flags()
	log.SetOutput(stdLogWriter{logger})
	log.SetFlags(0)
	return func() {
		log.SetOutput(out)
		log.SetFlags(flags)
	}
}

// stdLogWriter is an io.Writer of log lines that logs each to a logger.
type stdLogWriter struct{ log *slog.Logger }

func (w stdLogWriter) Write(p []byte) (int, error) {
	for line := range strings.SplitSeq(strings.TrimRight(string(p), "\n"), "\n") {
		w.log.Warn(strings.TrimPrefix(line, "Warning: "), slog.String("source", "iceberg-go"))
	}
	return len(p), nil
}
