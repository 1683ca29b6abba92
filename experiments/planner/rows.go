package planner

import (
	"fmt"

	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/planner/speed"
)

// rowCandidates are the plan's row layouts for a dictionary of several
// attributes, or of one String or Nullable (a String its reference, its bytes in the row's arena; a row
// wider than a cell's value in the row array, its number in the cell):
// packed_row and compact_row
// at each shard count and distinct geometry, their tables grown (not
// reserved, unless --preallocate) as packlab's are. No ClickHouse layout
// builds them, and their speeds are not measured yet, so they carry none.
func rowCandidates(p ParsedRequest, sc speed.Scaling, threads int) ([]Candidate, error) {
	if !p.rowValued() || p.stringKey || config.CheckRow(p.attrs) != nil {
		return nil, nil
	}
	row := dict.RowType(p.attrs)
	var out []Candidate
	for _, l := range dict.RowTables {
		for _, shards := range planShards {
			var lastBuckets int64 = -1
			for _, mlf := range planLoadFactors() {
				pr, err := dict.RowPrediction(l, p.key, p.attrs, p.distinct, p.options(mlf), shards)
				if err != nil {
					return nil, fmt.Errorf("%s%s: %w", l, dict.RowSuffix, err)
				}
				if pr.BucketCount == lastBuckets {
					continue
				}
				lastBuckets = pr.BucketCount
				rp := p
				rp.value = row
				c := candidate(rp, l, mlf, shards, pr, Measure{}, sc, threads)
				c.Layout = string(l) + dict.RowSuffix
				c.ClickHouseLayout, c.ClickHouseNote, c.PacklabOnly, c.ClickHouse = "", "packlab's own: no ClickHouse layout keeps a row", true, nil
				c.FollowsMLF = true
				out = append(out, c)
			}
		}
	}
	return out, nil
}
