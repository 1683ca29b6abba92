module github.com/packlab/packlab

go 1.26

require github.com/go-echarts/go-echarts/v2 v2.6.7
