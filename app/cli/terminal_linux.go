//go:build linux

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminal says whether f is a terminal: it has a terminal's settings.
func terminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
