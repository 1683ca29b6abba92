package main

import (
	"context"

	"github.com/packlab/packlab/core"
)

func load(ctx context.Context) error {
// <Int128,Float32>, stored by their bits as <core.U128,uint32>
spec, err := core.ParseSourceSpec("dict.tsv") // a TSV or CSV file: key, value
if err != nil {
	return err
}
src, err := core.OpenSource[core.U128, uint32](spec, core.MustType("Int128"), core.MustType("Float32"))
if err != nil {
	return err
}
defer src.Close()
m, report, err := core.Load(ctx, src, core.LoadConfig{
	Layout:  "packed",
	Options: core.Options{MaxLoadFactor: 0.94},
	Shards:  8,
})
if err != nil {
	return err
}
defer m.Close()                                   // the tables' memory is returned at once
v, ok := m.Get(core.FromUint64[core.U128](42, 0)) // key 42's value
	_, _, _ = report, v, ok
	return nil
}

func main() { _ = load(context.Background()) }
