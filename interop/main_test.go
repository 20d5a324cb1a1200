//go:build interop

package interop

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/icerun/icerun/internal/enginestest"
)

// stats counts what the suite compared, for its closing line.
var stats counts

type counts struct {
	mu              sync.Mutex
	tables, queries int
}

func (c *counts) add(tables, queries int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tables += tables
	c.queries += queries
}

func TestMain(m *testing.M) {
	code := m.Run()
	if e := enginestest.Running(); e != nil {
		fmt.Fprintf(os.Stderr, "interop: %d tables checked, %d reads compared, %d engine requests\n", stats.tables, stats.queries, e.Requests)
	}
	enginestest.Stop()
	os.Exit(code)
}
