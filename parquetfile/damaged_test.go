package parquetfile

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// Damaged files (a few bytes of a good one overwritten) are errors, never
// a panic: arrow-go's reader panics on about 1% of them, in Open or in
// Next, and an input file must not crash the process. Those are
// ErrCorrupt.
func TestDamagedFilesAreErrors(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	dir := t.TempDir()
	corrupt, files := 0, 1500
	if testing.Short() {
		files = 150
	}
	for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Zstd} {
		base := sampleFile(t, codec)
		for i := range files {
			data := append([]byte(nil), base...)
			for range 1 + rng.Intn(4) {
				data[rng.Intn(len(data))] = byte(rng.Intn(256))
			}
			path := filepath.Join(dir, fmt.Sprintf("%s-%d.parquet", codec, i))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			err := readDamaged(path)
			if errors.Is(err, ErrCorrupt) {
				corrupt++
			}
			os.Remove(path)
		}
	}
	t.Logf("%d of %d damaged files made arrow-go's reader panic: ErrCorrupt", corrupt, 2*files)
}

// readDamaged reads every batch of path, failing the test on a panic.
func readDamaged(path string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic escaped: %v", p)
			panic(err)
		}
	}()
	r, err := Open(context.Background(), []string{path}, WithBatchRows(3))
	if err != nil {
		return err
	}
	defer r.Release()
	for r.Next() {
	}
	return r.Err()
}
