package core

import (
	"math/rand/v2"
	"testing"
)

// TestPredictMatchesTables builds real tables and checks the prediction of
// the final geometry against what they report.
func TestPredictMatchesTables(t *testing.T) {
	k, v := MustType("UInt64"), MustType("UInt16")
	for _, l := range Layouts() {
		for _, rows := range []int64{1000, 200_000} {
			m, _ := New[uint64, uint16](l, Options{})
			rng := rand.New(rand.NewPCG(3, 3))
			for int64(m.Len()) < rows {
				m.Insert(rng.Uint64()|1, 1)
			}
			p, err := Predict(l, k, v, rows, Options{}, 1)
			if err != nil {
				t.Fatal(err)
			}
			st := m.Stats()
			tol := 0.0005
			if p.Estimated {
				tol = 0.10
			}
			if p.BucketCount != st.BucketCount {
				t.Errorf("%s rows=%d: predicted bucket_count %d, table has %d", l, rows, p.BucketCount, st.BucketCount)
			}
			if r := float64(p.FinalBytes) / float64(st.BytesAllocated); r < 1-tol-0.02 || r > 1+tol+0.02 {
				t.Errorf("%s rows=%d: predicted %d bytes, table has %d (ratio %.3f)", l, rows, p.FinalBytes, st.BytesAllocated, r)
			}
			if p.PeakBytes < p.FinalBytes {
				t.Errorf("%s: peak %d below final %d", l, p.PeakBytes, p.FinalBytes)
			}
		}
	}
	if _, err := Predict(LayoutHashed, k, v, 10, Options{MaxLoadFactor: 2}, 1); err == nil {
		t.Error("Predict accepted max_load_factor 2")
	}
}
