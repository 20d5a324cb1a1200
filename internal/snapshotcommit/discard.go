package snapshotcommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"

	iceio "github.com/apache/iceberg-go/io"

	icetable "github.com/apache/iceberg-go/table"
)

// removeWritten removes the files a commit attempt wrote (its manifests
// and manifest list) once it is known that the catalog did not apply it:
// no table state references them. Best effort: what cannot be removed is
// left to an orphan cleanup.
func removeWritten(ctx context.Context, tbl *icetable.Table, written []string) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}

	return removeAll(fsys, written)
}

// removeOldMetadata is Iceberg's write.metadata.delete-after-commit: when
// the committed table enables it, the metadata files that fell out of the
// metadata log with this commit are removed. Best effort.
func removeOldMetadata(ctx context.Context, base, committed *icetable.Table) {
	if !committed.Properties().GetBool(icetable.MetadataDeleteAfterCommitEnabledKey, icetable.MetadataDeleteAfterCommitEnabledDefault) {
		return
	}
	live := map[string]bool{}
	for e := range committed.Metadata().PreviousFiles() {
		live[e.MetadataFile] = true
	}
	fsys, err := committed.FS(ctx)
	if err != nil {
		return
	}
	for e := range base.Metadata().PreviousFiles() {
		if !live[e.MetadataFile] {
			_ = fsys.Remove(e.MetadataFile)
		}
	}
}

// RemoveLostMetadata removes the metadata files that catalogs wrote for
// commits that lost the race from base (iceberg-go's SQL catalog writes
// the file before its conditional update and keeps it when the update
// loses). Any committer that saw a conflict on base can call it with the
// table as it is now: after a conflict the table has
// moved past base's version v, so every commit built on base (ours
// included, and any other still in flight) can only fail, and the one
// metadata file of version v+1 that won is in the table's metadata log
// (or is the current file). Every other file named v+1-<uuid>.metadata.json
// beside base's file is such a loser, referenced by nothing, and never
// will be. Nothing is removed unless the winner is found. Best effort.
func RemoveLostMetadata(ctx context.Context, base, now *icetable.Table) {
	dir, baseName := path.Split(base.MetadataLocation())
	v, ok := metadataVersion(baseName)
	if !ok {
		return
	}
	next := fmt.Sprintf("%05d-", v+1)
	// Compare by file name: names carry a UUID, and the same file may be
	// spelled with other URI forms in the log and in a listing.
	live := map[string]bool{path.Base(now.MetadataLocation()): true}
	for e := range now.Metadata().PreviousFiles() {
		live[path.Base(e.MetadataFile)] = true
	}
	winner := false
	for name := range live {
		winner = winner || strings.HasPrefix(name, next)
	}
	if !winner {
		return
	}
	fsys, err := now.FS(ctx)
	if err != nil {
		return
	}
	lister, ok := fsys.(iceio.ListableIO)
	if !ok {
		return
	}
	_ = lister.WalkDir(strings.TrimSuffix(dir, "/"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if name := path.Base(p); strings.HasPrefix(name, next) && strings.HasSuffix(name, ".metadata.json") && !live[name] {
			_ = fsys.Remove(p)
		}
		return nil
	})
}

// metadataVersion parses the version of a metadata file named
// "00042-<uuid>.metadata.json".
func metadataVersion(name string) (int, bool) {
	num, _, ok := strings.Cut(name, "-")
	if !ok || len(num) < 5 {
		return 0, false
	}
	v, err := strconv.Atoi(num)
	return v, err == nil && v >= 0
}

// removeUnappliedMetadata removes the metadata file that a catalog wrote
// for this call's commit (token) and then did not apply: iceberg-go's SQL
// catalog writes the new metadata.json before its conditional update, and
// keeps it when the update fails (a cancellation, a lost connection). now
// is the table reloaded after the failure, which proved that the commit is
// not in the table; the file is found among the metadata files newer than
// base's that now's metadata log does not hold, by the token in its
// snapshot summary. Files of other writers' commits, possibly still in
// flight, never hold the token and are left alone. Best effort for
// unreadable files; a removal that fails is returned.
func removeUnappliedMetadata(ctx context.Context, base, now *icetable.Table, token string) error {
	if now == nil || token == "" {
		return nil
	}
	dir, baseName := path.Split(base.MetadataLocation())
	v, ok := metadataVersion(baseName)
	if !ok {
		return nil
	}
	live := map[string]bool{path.Base(now.MetadataLocation()): true}
	for e := range now.Metadata().PreviousFiles() {
		live[path.Base(e.MetadataFile)] = true
	}
	fsys, err := now.FS(ctx)
	if err != nil {
		return err
	}
	lister, ok := fsys.(iceio.ListableIO)
	if !ok {
		return nil
	}
	var errs []error
	_ = lister.WalkDir(strings.TrimSuffix(dir, "/"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		name := path.Base(p)
		if n, ok := metadataVersion(name); !ok || n <= v || live[name] || !strings.HasSuffix(name, ".metadata.json") {
			return nil
		}
		if holdsToken(fsys, p, token) {
			if err := fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		return nil
	})
	return errors.Join(errs...)
}

// holdsToken reports whether the file at p contains token (a UUID, found
// in the snapshot summary of a metadata file that this call's commit wrote).
func holdsToken(fsys iceio.IO, p, token string) bool {
	f, err := fsys.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return err == nil && bytes.Contains(b, []byte(token))
}
