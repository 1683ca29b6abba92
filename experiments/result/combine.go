package result

import (
	"math"
	"slices"
)

// Combine folds the repeats of one layout into one result: times are
// medians with their range (Result.Spread), memory and the rest come from
// the last repeat.
func Combine(reps []Result) Result {
	last := reps[len(reps)-1]
	if len(reps) == 1 {
		return last
	}
	loads := make([]float64, len(reps))
	reads := make([]float64, len(reps))
	kernel := make([]float64, len(reps))
	for i, r := range reps {
		loads[i], reads[i], kernel[i] = r.LoadSeconds, r.ReadSeconds, r.LoadKernelSeconds
	}
	lookups := math.Round(last.ReadRowsPerSecond * last.ReadSeconds)
	last.LoadSeconds, last.ReadSeconds, last.LoadKernelSeconds = median(loads), median(reads), median(kernel)
	last.LoadRowsPerSecond, last.ReadRowsPerSecond = 0, 0
	if last.LoadSeconds > 0 {
		last.LoadRowsPerSecond = float64(last.Rows) / last.LoadSeconds
	}
	if last.ReadSeconds > 0 {
		last.ReadRowsPerSecond = lookups / last.ReadSeconds
	}
	last.Repeats = len(reps)
	last.Spread = &Spread{
		LoadSecondsMin: slices.Min(loads), LoadSecondsMax: slices.Max(loads),
		ReadSecondsMin: slices.Min(reads), ReadSecondsMax: slices.Max(reads),
	}
	return last
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
