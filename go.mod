module github.com/packlab/packlab

go 1.26

require (
	github.com/go-echarts/go-echarts/v2 v2.6.7
	github.com/pbnjay/memory v0.0.0-20210728143218-7b4eea64cf58
)
