package faults

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	iceio "github.com/apache/iceberg-go/io"
)

// IO is a file IO whose operations go through an [Injector]. It implements
// iceberg-go's IO, ReadFileIO, WriteFileIO, ListableIO and StatIO; an
// extension the wrapped IO lacks fails with errors.ErrUnsupported.
type IO struct {
	inner iceio.IO
	in    *Injector
	ctx   context.Context // of the table's FS call: what a Hang waits for
}

// WrapIO wraps fsys. ctx is the context a [Hang] waits on (file IO calls
// carry none of their own).
func WrapIO(ctx context.Context, fsys iceio.IO, in *Injector) *IO {
	return &IO{inner: fsys, in: in, ctx: ctx}
}

var (
	_ iceio.ReadFileIO  = (*IO)(nil)
	_ iceio.WriteFileIO = (*IO)(nil)
	_ iceio.ListableIO  = (*IO)(nil)
	_ iceio.StatIO      = (*IO)(nil)
)

func unsupported(op string, fsys iceio.IO) error {
	return fmt.Errorf("faults: %s: %T: %w", op, fsys, errors.ErrUnsupported)
}

// Open opens name for reading.
func (f *IO) Open(name string) (iceio.File, error) {
	return call(f.ctx, f.in, "io.open "+name, func() (iceio.File, error) { return f.inner.Open(name) })
}

// Remove removes name.
func (f *IO) Remove(name string) error {
	return do(f.ctx, f.in, "io.remove "+name, func() error { return f.inner.Remove(name) })
}

// ReadFile reads name.
func (f *IO) ReadFile(name string) ([]byte, error) {
	return call(f.ctx, f.in, "io.read "+name, func() ([]byte, error) {
		if r, ok := f.inner.(iceio.ReadFileIO); ok {
			return r.ReadFile(name)
		}
		return nil, unsupported("read", f.inner)
	})
}

// Create creates name; closing the writer is an operation of its own.
func (f *IO) Create(name string) (iceio.FileWriter, error) {
	w, err := call(f.ctx, f.in, "io.create "+name, func() (iceio.FileWriter, error) {
		if w, ok := f.inner.(iceio.WriteFileIO); ok {
			return w.Create(name)
		}
		return nil, unsupported("create", f.inner)
	})
	if err != nil {
		return nil, err
	}
	return &writer{FileWriter: w, f: f, name: name}, nil
}

// WriteFile writes p to name.
func (f *IO) WriteFile(name string, p []byte) error {
	return do(f.ctx, f.in, "io.write "+name, func() error {
		if w, ok := f.inner.(iceio.WriteFileIO); ok {
			return w.WriteFile(name, p)
		}
		return unsupported("write", f.inner)
	})
}

// WalkDir walks root.
func (f *IO) WalkDir(root string, fn fs.WalkDirFunc) error {
	return do(f.ctx, f.in, "io.list "+root, func() error {
		if l, ok := f.inner.(iceio.ListableIO); ok {
			return l.WalkDir(root, fn)
		}
		return unsupported("list", f.inner)
	})
}

// Stat describes name.
func (f *IO) Stat(name string) (fs.FileInfo, error) {
	return call(f.ctx, f.in, "io.stat "+name, func() (fs.FileInfo, error) {
		if s, ok := f.inner.(iceio.StatIO); ok {
			return s.Stat(name)
		}
		return nil, unsupported("stat", f.inner)
	})
}

// writer makes Close (the upload, on an object store) an operation.
type writer struct {
	iceio.FileWriter
	f    *IO
	name string
}

func (w *writer) Close() error {
	return do(w.f.ctx, w.f.in, "io.close "+w.name, w.FileWriter.Close)
}
