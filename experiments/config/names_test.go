package config

import (
	"testing"
)

func TestJobNames(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{RunJobName(Config{Layouts: []string{"packed", "hashed"}, Rows: 1e7}), "run packed,hashed 1e7"},
		{RunJobName(Config{}), "run all layouts 1e6"},
		{RunJobName(Config{Layouts: []string{"sparse"}, Source: "/data/dict.tsv.gz"}), "run sparse dict.tsv.gz"},
		{RunJobName(Config{Rows: 2_500_000, Key: "UInt32", Shards: 4, MaxLoadFactor: 0.9, Keys: "zipf:1.1"}),
			"run all layouts 2.5e6 zipf:1.1 UInt32→UInt16 shards 4 mlf 0.9"},
		{RunJobName(Config{Rows: 12345, Key: "UInt64", Value: "UInt16", Keys: "random", MaxLoadFactor: 0.5, Shards: 1}), "run all layouts 12345"},
		{RunJobName(Config{Layouts: []string{"ch_hashed"}, Rows: 1e5, Attributes: []string{"UInt16", "UInt32", "Float64"}}),
			"run ch_hashed 1e5 UInt64→UInt16,UInt32,Float64"},
		{SweepJobName("types", Config{}), "sweep types"},
		{SweepJobName("types", Config{Rows: 1e5}), "sweep types 1e5"},
		{SweepJobName("shards", Config{Layouts: []string{"packed"}, Rows: 2e6}), "sweep shards packed 2e6"},
	} {
		if c.got != c.want {
			t.Errorf("job name %q, want %q", c.got, c.want)
		}
	}
	for n, want := range map[int64]string{1000: "1e3", 100_000: "1e5", 2_500_000: "2.5e6", 1e8: "1e8", 999: "999", 12_345_678: "12345678", 1_500: "1.5e3"} {
		if got := shortRows(n); got != want {
			t.Errorf("shortRows(%d) = %q, want %q", n, got, want)
		}
	}
}
