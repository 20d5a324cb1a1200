package table

import (
	"io"
	"sync"

	iceio "github.com/apache/iceberg-go/io"
)

// ioFailure keeps the first error of a data file's create, write or close.
//
// iceberg-go's rolling writer can stop on a failed file and report only
// icetable.ErrWriterClosed to the next record it is given, the cause
// staying in a channel nobody reads. The stager reports the kept error
// instead, so that a read-only warehouse is fs.ErrPermission and a full
// disk is ENOSPC, whichever goroutine saw it first.
type ioFailure struct {
	mu  sync.Mutex
	err error
}

// keep records err when it is the first, and returns it. A nil ioFailure
// keeps nothing.
func (f *ioFailure) keep(err error) error {
	if f == nil || err == nil {
		return err
	}
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
	return err
}

// first is the first error kept, or nil.
func (f *ioFailure) first() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// failureKeepingWriter is a data file whose write and close errors are
// kept.
type failureKeepingWriter struct {
	iceio.FileWriter
	failed *ioFailure
}

func (w failureKeepingWriter) Write(p []byte) (int, error) {
	n, err := w.FileWriter.Write(p)
	return n, w.failed.keep(err)
}

func (w failureKeepingWriter) Close() error { return w.failed.keep(w.FileWriter.Close()) }

func (w failureKeepingWriter) ReadFrom(r io.Reader) (int64, error) {
	n, err := w.FileWriter.ReadFrom(r)
	return n, w.failed.keep(err)
}
