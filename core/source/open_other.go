//go:build !unix

package source

import (
	"context"
	"os"
)

// openWait: outside Unix (the browser's files, Windows) no open of a file
// name waits for another program, so it opens directly.
func openWait(ctx context.Context, path string) (*os.File, error) {
	return os.Open(path)
}
