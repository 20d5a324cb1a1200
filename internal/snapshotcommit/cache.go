package snapshotcommit

import (
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
)

// manifestCache holds the manifest lists and the live manifest entries one
// [Replace] call has read, by path, across its attempts. Both files are
// immutable once written (their names are unique), so a retry after a
// conflict reads only what the moved table added: its new manifest list
// and the manifests it rewrote, not the ones it kept. Each attempt also
// reads the manifest list once for planning and for the snapshot writer.
type manifestCache struct {
	lists   map[string][]iceberg.ManifestFile
	entries map[string][]iceberg.ManifestEntry
}

func newManifestCache() *manifestCache {
	return &manifestCache{lists: map[string][]iceberg.ManifestFile{}, entries: map[string][]iceberg.ManifestEntry{}}
}

// manifests are the manifests of snap. A nil cache reads them.
func (c *manifestCache) manifests(fsys iceio.IO, snap *icetable.Snapshot) ([]iceberg.ManifestFile, error) {
	if c == nil {
		return snap.Manifests(fsys)
	}
	if l, ok := c.lists[snap.ManifestList]; ok {
		return l, nil
	}
	l, err := snap.Manifests(fsys)
	if err == nil {
		c.lists[snap.ManifestList] = l
	}
	return l, err
}

// live are the live entries of mf. A nil cache reads them.
func (c *manifestCache) live(fsys iceio.IO, mf iceberg.ManifestFile) ([]iceberg.ManifestEntry, error) {
	if c == nil {
		return mf.FetchEntries(fsys, true)
	}
	if es, ok := c.entries[mf.FilePath()]; ok {
		return es, nil
	}
	es, err := mf.FetchEntries(fsys, true)
	if err == nil {
		c.entries[mf.FilePath()] = es
	}
	return es, err
}
