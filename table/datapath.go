package table

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
)

// dataPaths gives every data file icerun writes a location that every
// engine opens as written: one without '%'.
//
// iceberg-go v0.7.0 names a partition's folder "name=value" with the
// value escaped by url.QueryEscape ("1e+300" is "1e%2B300", "café" is
// "caf%C3%A9"), records that location as the file's file_path, but its
// file IO (local and S3) URL-decodes the location when it creates the
// file. Java's HadoopFileIO and S3FileIO and PyIceberg open file_path
// literally and would not find the file.
//
// Under the table's data folder ("<location>/data/"), a location is
// therefore spelled with every '%' as '@' ("c=caf@C3@A9"), a character
// QueryEscape always escapes, so distinct folders stay distinct; a folder
// name longer than [MaxPathSegment] bytes keeps its first bytes and ends
// in a hash of the whole name. The spelled location contains neither '%'
// nor anything URL parsing alters, so the file is created at exactly the
// name file_path records. Iceberg derives nothing from folder names.
// Locations elsewhere (an unpartitioned table's write.data.path) are
// left as they are.
type dataPaths struct {
	prefix string // "<location>/data/" as iceberg-go's writers spell it
}

func newDataPaths(tbl *icetable.Table) dataPaths {
	root, err := url.Parse(tbl.Location())
	if err != nil {
		return dataPaths{} // iceberg-go's writers fail on this location too
	}
	return dataPaths{prefix: root.JoinPath("data").String() + "/"}
}

// real is the location at which a data file that iceberg-go's writers
// name loc is created, and which file_path records.
func (p dataPaths) real(loc string) string {
	rest, ok := strings.CutPrefix(loc, p.prefix)
	if !ok || p.prefix == "" || !strings.Contains(rest, "%") {
		return loc
	}
	segs := strings.Split(strings.ReplaceAll(rest, "%", "@"), "/")
	for i, seg := range segs {
		if len(seg) > MaxPathSegment {
			sum := sha256.Sum256([]byte(seg))
			tag := hex.EncodeToString(sum[:8])
			segs[i] = seg[:MaxPathSegment-len(tag)-1] + "-" + tag
		}
	}
	return p.prefix + strings.Join(segs, "/")
}

// writing is tbl with a file IO that creates its data files at their
// real locations, for iceberg-go's writers (it cannot commit).
func (p dataPaths) writing(tbl *icetable.Table, failed *ioFailure) *icetable.Table {
	fsF := func(ctx context.Context) (iceio.IO, error) {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		return realPathIO{inner: fsys, paths: p, failed: failed}, nil
	}
	return icetable.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), fsF, nil)
}

// realPathIO is a file IO that reads, creates and removes each file at
// its real location (see dataPaths).
type realPathIO struct {
	inner  iceio.IO
	paths  dataPaths
	failed *ioFailure // nil, or where the first failed create or write is kept
}

func (r realPathIO) Open(name string) (iceio.File, error) { return r.inner.Open(r.paths.real(name)) }
func (r realPathIO) Remove(name string) error             { return r.inner.Remove(r.paths.real(name)) }

func (r realPathIO) Create(name string) (iceio.FileWriter, error) {
	w, ok := r.inner.(iceio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("table: create %s: %w: file IO %T cannot write", name, errors.ErrUnsupported, r.inner)
	}
	fw, err := w.Create(r.paths.real(name))
	if err != nil {
		return nil, r.failed.keep(err)
	}
	if r.failed == nil {
		return fw, nil
	}
	return failureKeepingWriter{FileWriter: fw, failed: r.failed}, nil
}

func (r realPathIO) WriteFile(name string, p []byte) error {
	w, ok := r.inner.(iceio.WriteFileIO)
	if !ok {
		return fmt.Errorf("table: write %s: %w: file IO %T cannot write", name, errors.ErrUnsupported, r.inner)
	}
	return r.failed.keep(w.WriteFile(r.paths.real(name), p))
}
