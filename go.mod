module github.com/packlab/packlab

go 1.26
