// Package writeprops checks the table properties that iceberg-go's data
// file writers read, before icerun writes a file: a table another engine
// made may hold values the writers refuse, panic on or cannot honor, and
// icerun refuses those up front with one typed error naming the property.
package writeprops

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/commit"
)

// positive are the properties that must be integers above 0 (Iceberg
// Java refuses the others too), in the order Check looks at them, with
// the largest value the writers take.
var positive = []struct {
	key string
	max int64
}{
	{"write.parquet.row-group-size-bytes", math.MaxInt64},
	{"write.parquet.row-group-limit", math.MaxInt64},
	{"write.parquet.page-size-bytes", math.MaxInt64},
	{"write.parquet.dict-size-bytes", math.MaxInt64},
	// a Java int; arrow-go's writer overflows on larger page row limits
	{"write.parquet.page-row-limit", math.MaxInt32},
}

const (
	codecKey        = "write.parquet.compression-codec"
	levelKey        = "write.parquet.compression-level"
	bloomMaxKey     = "write.parquet.bloom-filter-max-bytes"
	metricsDefault  = "write.metadata.metrics.default"
	metricsColumnPx = "write.metadata.metrics.column."
)

// codecs are the Parquet codec names of the Iceberg spec (and lz4raw),
// with arrow-go's codec and the range of levels it takes (min > max: no
// level). An unknown name is written uncompressed by iceberg-go, as the
// data it holds is unchanged; a known codec arrow-go cannot write (lz4,
// lzo) is refused.
var codecs = map[string]struct {
	codec    compress.Compression
	min, max int
}{
	"uncompressed": {compress.Codecs.Uncompressed, 1, 0},
	"snappy":       {compress.Codecs.Snappy, 1, 0},
	"gzip":         {compress.Codecs.Gzip, -3, 9},
	"zstd":         {compress.Codecs.Zstd, -5, 22},
	"brotli":       {compress.Codecs.Brotli, 0, 11},
	"lz4":          {compress.Codecs.Lz4, 1, 0},
	"lz4raw":       {compress.Codecs.Lz4Raw, 1, 0},
	"lzo":          {compress.Codecs.Lzo, 1, 0},
}

var truncateMode = regexp.MustCompile(`^truncate\(([0-9]+)\)$`)

// Check returns an error wrapping [commit.ErrUnsupported] for the first
// property of props (in a fixed order) whose value the data file writers
// cannot take.
func Check(props iceberg.Properties) error {
	for _, p := range positive {
		v, ok := props[p.key]
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n <= 0 || n > p.max {
			return bad(p.key, v, fmt.Sprintf("not an integer in 1..%d", p.max))
		}
	}
	if v, ok := props[bloomMaxKey]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 32 || n > 128<<20 {
			return bad(bloomMaxKey, v, fmt.Sprintf("not an integer in 32..%d", 128<<20))
		}
	}
	name := props.Get(codecKey, "zstd")
	c, known := codecs[name]
	if known {
		if _, err := compress.GetCodec(c.codec); err != nil {
			return bad(codecKey, name, "a codec the Parquet writer cannot write")
		}
	}
	if v, ok := props[levelKey]; ok {
		level, err := strconv.Atoi(v)
		switch {
		case err != nil:
			return bad(levelKey, v, "not an integer")
		case known && c.min <= c.max && level != -1 && (level < c.min || level > c.max):
			return bad(levelKey, v, fmt.Sprintf("not a %s level (%d..%d, or -1)", name, c.min, c.max))
		}
	}
	if v, ok := props[metricsDefault]; ok {
		if err := metricsMode(v); err != nil {
			return bad(metricsDefault, v, err.Error())
		}
	}
	for k, v := range props {
		if strings.HasPrefix(k, metricsColumnPx) {
			if err := metricsMode(v); err != nil {
				return bad(k, v, err.Error())
			}
		}
	}
	return nil
}

// metricsMode checks a metrics mode: none, counts, full or truncate(N),
// N above 0, in any case.
func metricsMode(v string) error {
	s := strings.ToLower(strings.TrimSpace(v))
	switch s {
	case "none", "counts", "full":
		return nil
	}
	m := truncateMode.FindStringSubmatch(s)
	if m == nil {
		return fmt.Errorf("not a metrics mode (none, counts, full, truncate(N))")
	}
	if n, err := strconv.Atoi(m[1]); err != nil || n <= 0 {
		return fmt.Errorf("truncate length not in 1..%d", math.MaxInt)
	}
	return nil
}

func bad(key, value, why string) error {
	return fmt.Errorf("%w: table property %s=%q: %s", commit.ErrUnsupported, key, value, why)
}
