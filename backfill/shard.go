package backfill

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/icerun/icerun/partition"
)

// shard is the share of the keys one worker of several runs: shard i of n.
// The zero value (n == 0) is every key.
type shard struct{ i, n int }

// WithShard makes Run take only shard i of n (0 <= i < n) of the keys it
// is given: the keys k with [ShardOf](k, n) == i. Start n workers, each
// with the same keys, code version and options and its own i, on as many
// machines as you like, against the same catalog: together they run every
// key once, and each commits its own keys ([WithKeysPerSnapshot] to a
// snapshot). A key's shard depends only on its canonical text and n, not
// on its position, so a longer key range gives every worker the keys it
// had plus a share of the new ones. [Report].Total counts the shard's keys.
//
// Resuming works across workers: [SkipDone] reads the lineage every
// worker commits with its snapshots, so a restarted worker skips what it
// finished before, and a run with another n skips what any worker of the
// earlier run finished. Default: every key (one worker).
func WithShard(i, n int) Option {
	return func(c *config) error {
		if n < 1 || i < 0 || i >= n {
			return fmt.Errorf("%w: shard %d of %d (want 0 <= i < n)", ErrBadOption, i, n)
		}
		c.shard = shard{i: i, n: n}
		return nil
	}
}

// ShardOf returns the shard, in [0, n), that owns key among n shards; it
// panics when n < 1. It is Lamping and Veach's jump consistent hash of the
// first 8 bytes (big-endian) of the SHA-256 of the key's canonical text
// (partition.Key.String), so any program can compute it. The shares are
// balanced in expectation (about sqrt(keys/n) keys apart), and growing n to
// n+1 moves only the keys that the new shard takes.
func ShardOf(key partition.Key, n int) int {
	if n < 1 {
		panic(fmt.Sprintf("backfill: ShardOf with %d shards", n))
	}
	sum := sha256.Sum256([]byte(key.String()))
	return jumpHash(binary.BigEndian.Uint64(sum[:8]), n)
}

// jumpHash is the jump consistent hash of Lamping and Veach, "A Fast,
// Minimal Memory, Consistent Hash Algorithm" (2014).
func jumpHash(key uint64, n int) int {
	b, j := int64(-1), int64(0)
	for j < int64(n) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int(b)
}

// keys returns the keys of keys that belong to the shard, in their order.
func (s shard) keys(keys []partition.Key) []partition.Key {
	if s.n <= 1 {
		return keys
	}
	var out []partition.Key
	for _, k := range keys {
		if ShardOf(k, s.n) == s.i {
			out = append(out, k)
		}
	}
	return out
}
