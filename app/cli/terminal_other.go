//go:build !linux

package cli

import "os"

// terminal says whether f is a character device, the best guess here.
func terminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
