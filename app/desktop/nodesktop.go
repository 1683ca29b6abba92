//go:build !desktop

package desktop

// Open reports that this binary has no window: it was built without the
// desktop tags, so with no subcommand packlab prints its help. Build with
// `make desktop` (tags desktop,production,webkit2_41) for the lab window.
func Open() (opened bool, err error) { return false, nil }

// BuiltIn says whether this binary has the lab window.
const BuiltIn = false
