// Package frontend holds the lab's user interface: plain HTML, CSS and
// JavaScript with no bundler, rendering what the app API returns. It computes
// no figure: numbers, labels and chart options all come from Go.
//
// FS serves these files to a face (the Wails asset server today, the browser
// build later). ECharts is not kept here a second time: vendor/echarts.min.js
// is the copy experiments embeds (ECharts 5.4.3, byte-equal to the npm
// package frontend/package.json pins), so the window, the browser and the
// HTML report run the very same file.
package frontend

import (
	"bytes"
	"embed"
	"io"
	"io/fs"
	"path"
	"time"

	"github.com/packlab/packlab/experiments/report"
)

//go:embed index.html css js
var files embed.FS

// EChartsPath is where the page loads ECharts from, relative to index.html.
const EChartsPath = "vendor/echarts.min.js"

// FS returns the frontend as a file system rooted at index.html, with
// EChartsPath served from report.EChartsJS.
func FS() fs.FS { return assets{} }

type assets struct{}

func (assets) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	switch name {
	case EChartsPath:
		return &memFile{name: path.Base(name), Reader: bytes.NewReader([]byte(report.EChartsJS()))}, nil
	}
	return files.Open(name)
}

// memFile is one read-only file held in memory.
type memFile struct {
	name string
	*bytes.Reader
}

func (f *memFile) Stat() (fs.FileInfo, error) { return memInfo{f.name, f.Reader.Size()}, nil }
func (f *memFile) Close() error               { return nil }

var _ io.ReadSeeker = (*memFile)(nil)

type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
