// Package report draws results: the charts (ECharts options every face
// shows unchanged), the results table in text, markdown, CSV or JSON, the
// plan's chart, the seed's claims beside what was measured, and the
// self-contained HTML report.
package report
