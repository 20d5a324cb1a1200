package sink

// SetBeforeCommit sets the test hook that runs after a committer planned a
// round and before it commits it (a zombie committer's pause).
func (c *Committer) SetBeforeCommit(f func()) { c.beforeCommit = f }

// SetMaxUnlanded sets how many hand-overs of a source partition member s
// makes without one landing before it is fenced.
func (s *Sink) SetMaxUnlanded(n int) { s.fleet.maxUnlanded = n }
