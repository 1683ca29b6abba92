package planner

import (
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
)

// DefaultClickHouseVersion is the release a plan is for unless told: the
// one the lab runs (make chdb). Which LAYOUT clauses a release accepts and
// what SPARSE_HASHED builds in it are dict's (dict.Release).
const DefaultClickHouseVersion = "26.7"

// parseClickHouseVersion reads "23.5", "23.5.2.1" or "v23.5-lts"
// (dict.ParseRelease); the oldest release it takes is 21.1, the newest
// 99.12.
func parseClickHouseVersion(s string) (dict.Release, error) {
	v, ok := dict.ParseRelease(s)
	if !ok || v.Major < 21 || v.Major > 99 || v.Minor < 1 || v.Minor > 12 {
		return dict.Release{}, fault.New("clickhouse_version", s, "not a ClickHouse release", "YY.M from 21.1 on, e.g. 23.3 or 26.7")
	}
	return v, nil
}
