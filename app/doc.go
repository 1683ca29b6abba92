// Package app is the lab's API as one Go type, bound to the desktop window
// (Wails) and to the browser (js/wasm). It imports experiments, never the
// other way round.
package app
