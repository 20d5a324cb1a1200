package sink

// SetBeforeCommit sets the test hook that runs after a committer planned a
// round and before it commits it (a zombie committer's pause).
func (c *Committer) SetBeforeCommit(f func()) { c.beforeCommit = f }
