// Package app is the lab's API as one Go type, Lab, bound to the desktop
// window (Wails, in app/desktop) and to the browser's page (js/wasm, in
// app/browser). It imports the engine, never the other way round, and no face:
// a face hands New its event emitter and native dialogs in Options.
//
// Every method takes and returns JSON-tagged values and (T, error); the
// error is always an *Error {field, message} naming the form field ("rows",
// "shards", "keys_param", ...) or the action ("run", "cancel", "export",
// "chart", "history", "source") it belongs to, so the page shows it there.
// The form arrives as typed (Form: "10M", "1e6", " 4 "); Go parses it.
//
//	Limits()                    choices, ranges, defaults, this machine
//	Estimate(Form)              predicted peak per layout vs available memory
//	StartRun(Form)              starts a run, returns its id at once
//	Cancel(id)                  stops it at any moment
//	Running()                   runs not yet finished
//	History()                   saved results, newest first
//	Delete(ids)                 removes saved results
//	Table(ids)                  the seed table's columns, formatted
//	Chart(kind, ids)            an ECharts option built by experiments
//	Export(ExportRequest)       chart PNG/SVG, HTML report, Markdown/CSV, JSON
//	ChooseSource()              the native open dialog for a key file
//	InspectClickHouse(form)     a ClickHouse server's dictionaries, modelled and advised, with
//	                            the tab's words and chart (not in js/wasm)
//	CancelInspect()             stops the inspections in progress (not in js/wasm)
//
// A run reports through Options.Emit: "run:progress" (Progress) while it
// loads and reads, "run:result" (RunResult) per layout saved, "run:error"
// (RunError) if it fails, and always "run:done" (RunDone) last. Runs are
// measured in a fresh worker process each (experiments.Run), one run at a
// time, and every result is saved in the results folder as it is measured,
// so History survives restarts.
package app
