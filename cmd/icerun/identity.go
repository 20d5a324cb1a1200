package main

import (
	"context"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/parquetfile"
	"github.com/icerun/icerun/partition"
)

// inputIdentity makes backfill's resume compare each key's input files
// (names under the key's folder, sizes, SHA-256 of the bytes) with what
// the lineage recorded, so a corrected day runs again.
func inputIdentity(l layout) []backfill.Option {
	return []backfill.Option{backfill.WithInputIdentity(func(ctx context.Context, k partition.Key) (string, error) {
		d := l.dir(k)
		files, err := parquetfile.List([]string{d})
		if err != nil {
			return "", err
		}
		return parquetfile.Identity(d, files)
	})}
}
