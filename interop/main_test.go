//go:build interop

package interop

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		fmt.Fprintf(os.Stderr, "interop: %d engine requests served\n", shared.Requests)
	}
	Stop()
	os.Exit(code)
}
