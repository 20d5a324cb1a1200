//go:build !unix

package commit

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	icetable "github.com/apache/iceberg-go/table"
)

// FileLock is a [Locker] on flock(2) locks of files in dir; see the Unix
// build. On this system it fails every Lock with [ErrLock].
func FileLock(dir string) Locker {
	return fileLock{}
}

type fileLock struct{}

func (fileLock) Lock(_ context.Context, ident icetable.Identifier) (func(), error) {
	return nil, fmt.Errorf("%w: %s: file locks are not supported on %s", ErrLock, strings.Join(ident, "."), runtime.GOOS)
}
