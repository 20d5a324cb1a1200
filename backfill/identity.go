package backfill

import (
	"context"
	"fmt"

	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// InputIdentity returns the identity of key's input without reading its
// rows: e.g. a content hash of its files, or the snapshot id of the
// source partition the job will read. Equal identities must mean equal
// input.
type InputIdentity func(ctx context.Context, key partition.Key) (string, error)

// WithInputIdentity makes resuming notice corrected input. Under
// [SkipDone] a key is then skipped only when its latest write was made by
// the writer's code version AND recorded the identity id returns now; a
// key whose input changed (or whose identity cannot be computed) runs
// again. The identity is recorded in the key's lineage
// (table.Write.Input).
//
// Without it, SkipDone compares the code version only: a rerun after the
// input of a key was corrected skips that key unless the code version
// changes or the run uses [RedoAll] (every key is then read again, and
// the unchanged ones make no snapshot). A Job whose reader implements
// table.InputIdentifier has its identity recorded in either case, but
// the skip decision is made before the job runs, so only this option's
// identity is compared.
func WithInputIdentity(id InputIdentity) Option {
	return func(c *config) error {
		if id == nil {
			return fmt.Errorf("%w: nil input identity", ErrBadOption)
		}
		c.identity = id
		return nil
	}
}

// identities computes the input identity of keys; a key whose identity
// fails is left out.
func (r *runner) identities(ctx context.Context, keys []partition.Key) map[string]string {
	if r.cfg.identity == nil {
		return nil
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		if id, err := r.cfg.identity(ctx, k); err == nil && id != "" {
			out[k.String()] = id
		}
	}
	return out
}

// isDone reports whether the recorded write of a key makes it done: same
// code version, and the same input identity when the run has them.
func (r *runner) isDone(wr table.Write, id string, haveID bool) bool {
	if wr.CodeVersion != r.w.CodeVersion() {
		return false
	}
	if r.cfg.identity == nil {
		return true
	}
	return haveID && wr.Input == id
}

// InputIdentity is the identity of key's input for the lineage: the one
// WithInputIdentity computed, else the one the key's job reader gave.
func (c *concat) InputIdentity(key string) string {
	if id, ok := c.ids[key]; ok {
		return id
	}
	return c.readerIDs[key]
}

var _ table.InputIdentifier = (*concat)(nil)
