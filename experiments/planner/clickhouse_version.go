package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments"
)

// The ClickHouse release a plan is for: which LAYOUT clauses it accepts
// and what SPARSE_HASHED builds change with it. From ClickHouse's
// changelogs and pull requests:
//
//	21.11  HASHED_ARRAY (#30242)
//	23.1   SHARDS and the parallel loader (#40003); PREALLOCATE ignored (#45388)
//	23.5   SPARSE_HASHED builds PackedHashMap for a value of at most 8 bytes
//	       (sparse_hash_map before), and takes MAX_LOAD_FACTOR (#49380)
//	23.12  SHARDS for HASHED_ARRAY (#57544)
//
// The lab runs one release (make chdb: 26.7); a plan may be for another.

// DefaultClickHouseVersion is the release a plan is for unless told: the
// one the lab runs.
const DefaultClickHouseVersion = "26.7"

// chVersion is a release's year and month number: 23.5.
type chVersion struct{ major, minor int }

func (v chVersion) atLeast(major, minor int) bool {
	return v.major > major || v.major == major && v.minor >= minor
}

func (v chVersion) String() string { return fmt.Sprintf("%d.%d", v.major, v.minor) }

// parseClickHouseVersion reads "23.5", "23.5.2.1" or "v23.5-lts"; the
// oldest release it takes is 21.1, the newest 99.12.
func parseClickHouseVersion(s string) (chVersion, error) {
	t := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "v")
	if i := strings.IndexAny(t, "-_ "); i >= 0 {
		t = t[:i]
	}
	parts := strings.Split(t, ".")
	bad := experiments.NewFieldError("clickhouse_version", s, "not a ClickHouse release", "YY.M from 21.1 on, e.g. 23.3 or 26.7")
	if len(parts) < 2 {
		return chVersion{}, bad
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	for _, p := range parts[2:] {
		if _, err := strconv.Atoi(p); err != nil {
			return chVersion{}, bad
		}
	}
	if err1 != nil || err2 != nil || major < 21 || major > 99 || minor < 1 || minor > 12 {
		return chVersion{}, bad
	}
	return chVersion{major, minor}, nil
}

// clickHouseBuilds says whether release v builds l's table for
// <key,value> with shards and mlf, and if not, why, citing the change;
// note says what differs in that release where it does build it.
func (v chVersion) builds(l core.Layout, value core.Type, shards int, mlf float64) (ok bool, why string) {
	packs := value.Size <= 8 && value.Kind != core.KindUUID
	switch {
	case l == core.LayoutHashedArray && !v.atLeast(21, 11):
		return false, fmt.Sprintf("ClickHouse %s has no HASHED_ARRAY (21.11, #30242)", v)
	case shards > 1 && !v.atLeast(23, 1):
		return false, fmt.Sprintf("ClickHouse %s has no SHARDS (23.1, #40003)", v)
	case shards > 1 && l == core.LayoutHashedArray && !v.atLeast(23, 12):
		return false, fmt.Sprintf("ClickHouse %s's HASHED_ARRAY takes no SHARDS (23.12, #57544)", v)
	case mlf != 0 && mlf != core.DefaultMaxLoadFactor && l != core.LayoutHashedArray && !v.atLeast(23, 5):
		return false, fmt.Sprintf("ClickHouse %s has no MAX_LOAD_FACTOR (23.5, #49380)", v)
	case l == core.LayoutPacked && !v.atLeast(23, 5):
		return false, fmt.Sprintf("ClickHouse %s's SPARSE_HASHED is sparse_hash_map, not PackedHashMap (23.5, #49380): see the sparse setups", v)
	case l == core.LayoutSparse && packs && v.atLeast(23, 5):
		return true, "" // built, as PackedHashMap: clickHouseFor says so
	}
	return true, ""
}
