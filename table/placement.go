package table

import (
	"cmp"
	"slices"

	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/internal/rowdelete"
)

// placement is where a readStored found the live rows of its keys, in
// the data files it read with positions known: a change planned on the
// same table state locates its rows from it instead of reading the key
// columns of those files a second time.
type placement struct {
	stored map[string]*storedKey
	files  placed
}

// matcher is m (which picks the rows whose key is in keys) knowing where
// those rows are in the placed files.
func (p *placement) matcher(m *keyMatcher, keys map[string]struct{}) rowdelete.Matcher {
	byFile := map[string][]placedRow{}
	for key := range keys {
		if s := p.stored[key]; s != nil {
			for _, r := range s.rows {
				byFile[r.file] = append(byFile[r.file], placedRow{pos: r.pos, key: key})
			}
		}
	}
	for _, rows := range byFile {
		slices.SortFunc(rows, func(a, b placedRow) int { return cmp.Compare(a.pos, b.pos) })
	}
	return &placedMatcher{keyMatcher: m, files: p.files, byFile: byFile}
}

type placedRow struct {
	pos int64
	key string
}

// placedMatcher is a keyMatcher that knows the positions of its rows in
// the placed files (rowdelete.Placed); the other files are read.
type placedMatcher struct {
	*keyMatcher
	files  placed
	byFile map[string][]placedRow // ascending positions; read-only
}

func (m *placedMatcher) Fork() rowdelete.Matcher {
	return &placedMatcher{keyMatcher: m.keyMatcher.Fork().(*keyMatcher), files: m.files, byFile: m.byFile}
}

func (m *placedMatcher) Placed(f iceberg.DataFile) ([]int64, []string, bool) {
	if !m.files[f.FilePath()] {
		return nil, nil, false
	}
	rows := m.byFile[f.FilePath()]
	pos, keys := make([]int64, len(rows)), make([]string, len(rows))
	for i, r := range rows {
		pos[i], keys[i] = r.pos, r.key
	}
	return pos, keys, true
}
