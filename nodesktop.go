//go:build !desktop

package main

// openLab reports that this binary has no window: it was built without the
// desktop tags, so with no subcommand packlab prints its help. Build with
// `make desktop` (tags desktop,production,webkit2_41) for the lab window.
func openLab() (bool, error) { return false, nil }

// windowBuiltIn says whether this binary has the lab window.
const windowBuiltIn = false
