package app

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/report"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/store"
	"github.com/packlab/packlab/experiments/text"
)

// ExportRequest says what to write and where.
//
//	what     format          content
//	chart    png, svg        Data: the chart as the page's ECharts drew it
//	                         (PNG: a data URL from getDataURL; SVG: the SVG
//	                         renderer's text); Kind names the chart
//	report   html            a self-contained HTML report of IDs
//	table    markdown, csv   the results table of IDs
//	results  json            the Result objects of IDs
//
// With Path empty the face's native save dialog asks where.
type ExportRequest struct {
	What   string   `json:"what"`
	Format string   `json:"format"`
	Kind   string   `json:"kind"`
	IDs    []string `json:"ids"`
	Data   string   `json:"data"`
	Path   string   `json:"path"`
	Title  string   `json:"title"` // the report's title; "" = "packlab comparison"
}

// Exported is Export's answer.
type Exported struct {
	Path      string `json:"path"`
	Bytes     int64  `json:"bytes"`
	Cancelled bool   `json:"cancelled"` // the person closed the save dialog
	Message   string `json:"message"`   // "Saved 48.2 KiB to /home/me/chart.png"
}

type exportFormat struct {
	what, format, ext, filter string
}

var exportFormats = []exportFormat{
	{"chart", "png", ".png", "PNG image"},
	{"chart", "svg", ".svg", "SVG image"},
	{"report", "html", ".html", "HTML report"},
	{"table", "markdown", ".md", "Markdown table"},
	{"table", "csv", ".csv", "CSV table"},
	{"results", "json", ".json", "JSON results"},
}

// Export writes a chart, the report, the table or the results to a file,
// atomically. Errors name "export" (or "chart" for a chart).
func (l *Lab) Export(req ExportRequest) (Exported, error) {
	what := strings.ToLower(strings.TrimSpace(req.What))
	format := strings.ToLower(strings.TrimSpace(req.Format))
	field := "export"
	if what == "chart" {
		field = "chart"
	}
	var ef *exportFormat
	var allowed []string
	for i, f := range exportFormats {
		allowed = append(allowed, f.what+" "+f.format)
		if f.what == what && f.format == format {
			ef = &exportFormats[i]
		}
	}
	if ef == nil {
		return Exported{}, errorf(field, "%s %s: cannot export that (allowed: %s)", req.What, req.Format, strings.Join(allowed, ", "))
	}
	rs, err := Results(l, req.IDs, field)
	if err != nil {
		return Exported{}, err
	}

	body, name, err := exportBody(req, what, format, field, rs)
	if err != nil {
		return Exported{}, err
	}
	path, err := l.exportPath(req, ef, name, field)
	if err != nil {
		return Exported{}, err
	}
	if path == "" {
		return Exported{Cancelled: true, Message: "Export cancelled"}, nil
	}
	if err := writeAtomic(path, body); err != nil {
		return Exported{}, errorf(field, "%s", err)
	}
	return Exported{Path: path, Bytes: int64(len(body)),
		Message: fmt.Sprintf("Saved %s to %s", text.Bytes(int64(len(body))), path)}, nil
}

// exportBody is the bytes an export writes, and the file name it proposes
// (without its extension).
func exportBody(req ExportRequest, what, format, field string, rs []result.Result) ([]byte, string, error) {
	var body bytes.Buffer
	name := "packlab-" + time.Now().Format("2006-01-02")
	switch what {
	case "chart":
		if !knownChart(req.Kind) {
			return nil, name, errorf(field, "%s: unknown chart (allowed: %s)", req.Kind, strings.Join(report.ChartKinds(), ", "))
		}
		name += "-" + req.Kind
		b, err := chartBytes(format, req.Data)
		if err != nil {
			return nil, name, errorf(field, "%s", err)
		}
		body.Write(b)
	case "report":
		name += "-report"
		title := strings.TrimSpace(req.Title)
		if title == "" {
			title = "packlab comparison"
		}
		if err := report.WriteReport(&body, rs, title); err != nil {
			return nil, name, ErrorOf(err, field)
		}
	case "table":
		name += "-table"
		if err := report.WriteTable(&body, rs, format); err != nil {
			return nil, name, ErrorOf(err, field)
		}
	case "results":
		name += "-results"
		if err := report.WriteTable(&body, rs, "json"); err != nil {
			return nil, name, ErrorOf(err, field)
		}
	}

	return body.Bytes(), name, nil
}

// exportPath is where an export goes: the request's path, else the one the
// save dialog gives ("" when the person cancels it).
func (l *Lab) exportPath(req ExportRequest, ef *exportFormat, name, field string) (string, error) {
	path := strings.TrimSpace(req.Path)
	if path == "" {
		if l.opt.SaveFile == nil {
			return "", errorf(field, "no save dialog here: give a path")
		}
		p, err := l.opt.SaveFile(FileDialog{
			Title:       "Export " + ef.filter,
			DefaultName: name + ef.ext,
			Filters:     []FileFilter{{Name: ef.filter + " (*" + ef.ext + ")", Pattern: "*" + ef.ext}},
		})
		if err != nil {
			return "", errorf(field, "the save dialog failed: %s", err)
		}
		if p == "" {
			return "", nil // cancelled
		}
		path = p
		if filepath.Ext(path) == "" {
			path += ef.ext
		}
	}
	return path, nil
}

// chartBytes checks what the page rendered and returns the file's bytes.
func chartBytes(format, data string) ([]byte, error) {
	if data == "" {
		return nil, errors.New("the chart was not rendered: no image data came from the page")
	}
	switch format {
	case "png":
		const prefix = "data:image/png;base64,"
		if !strings.HasPrefix(data, prefix) {
			return nil, fmt.Errorf("PNG data must be a data URL starting %q, got %.30q", prefix, data)
		}
		b, err := base64.StdEncoding.DecodeString(data[len(prefix):])
		if err != nil {
			return nil, fmt.Errorf("PNG data is not valid base64: %v", err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("PNG data is not a PNG image: %v", err)
		}
		if cfg.Width == 0 || cfg.Height == 0 {
			return nil, fmt.Errorf("the PNG image is %dx%d pixels", cfg.Width, cfg.Height)
		}
		return b, nil
	case "svg":
		s := strings.TrimSpace(data)
		start := strings.TrimSpace(strings.TrimPrefix(s, xmlHeader))
		if !strings.HasPrefix(start, "<svg") || !strings.HasSuffix(s, "</svg>") {
			return nil, fmt.Errorf("SVG data must be one <svg> element, got %.30q…", s)
		}
		if !strings.HasPrefix(s, "<?xml") {
			s = xmlHeader + "\n" + s
		}
		return []byte(s + "\n"), nil
	}
	return nil, fmt.Errorf("%s: not a chart format (allowed: png, svg)", format)
}

const xmlHeader = `<?xml version="1.0" encoding="UTF-8"?>`

// writeAtomic writes b to path through a temporary file in the same folder
// and a rename (store.WriteFile), so that a reader never sees half a file;
// its errors name the folder or the file for the export's message.
func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: no such folder", dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a folder", path)
	}
	if err := store.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %v", path, source.PathErrorReason(err))
	}
	return nil
}

// SourceChoice is ChooseSource's answer.
type SourceChoice struct {
	Path      string `json:"path"`
	Cancelled bool   `json:"cancelled"`
}

// ChooseSource asks for a key file with the native open dialog.
func (l *Lab) ChooseSource() (SourceChoice, error) {
	if l.opt.OpenFile == nil {
		return SourceChoice{}, errorf("source", "no file dialog here: type the file's path")
	}
	p, err := l.opt.OpenFile(FileDialog{
		Title: "Choose a TSV or CSV file of keys (and values)",
		Filters: []FileFilter{
			{Name: "Tables (*.tsv, *.csv, *.gz)", Pattern: "*.tsv;*.csv;*.tsv.gz;*.csv.gz;*.txt"},
			{Name: "All files", Pattern: "*"},
		},
	})
	if err != nil {
		return SourceChoice{}, errorf("source", "the file dialog failed: %s", err)
	}
	if p == "" {
		return SourceChoice{Cancelled: true}, nil
	}
	return SourceChoice{Path: p}, nil
}
