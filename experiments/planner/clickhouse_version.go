package planner

import (
	"strconv"
	"strings"

	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
)

// DefaultClickHouseVersion is the release a plan is for unless told: the
// one the lab runs (make chdb). Which LAYOUT clauses a release accepts and
// what SPARSE_HASHED builds in it are dict's (dict.Release).
const DefaultClickHouseVersion = "26.7"

// parseClickHouseVersion reads "23.5", "23.5.2.1" or "v23.5-lts"; the
// oldest release it takes is 21.1, the newest 99.12.
func parseClickHouseVersion(s string) (dict.Release, error) {
	t := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "v")
	if i := strings.IndexAny(t, "-_ "); i >= 0 {
		t = t[:i]
	}
	parts := strings.Split(t, ".")
	bad := fault.New("clickhouse_version", s, "not a ClickHouse release", "YY.M from 21.1 on, e.g. 23.3 or 26.7")
	if len(parts) < 2 {
		return dict.Release{}, bad
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	for _, p := range parts[2:] {
		if _, err := strconv.Atoi(p); err != nil {
			return dict.Release{}, bad
		}
	}
	if err1 != nil || err2 != nil || major < 21 || major > 99 || minor < 1 || minor > 12 {
		return dict.Release{}, bad
	}
	return dict.Release{Major: major, Minor: minor}, nil
}
