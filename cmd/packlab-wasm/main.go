//go:build js && wasm

// Command packlab-wasm is the browser lab's Go side: the lab's API
// (app.Lab) compiled to WebAssembly, run inside a Web Worker by
// frontend/js/wasm-worker.js, which is its host (see app/browser).
// `make web` builds it into build/web/packlab.wasm; `packlab serve` serves
// that folder.
//
// The host is globalThis.packlabHost, set up by the worker before this
// starts; its resultsDir names the folder results are kept in (a folder of
// the worker's file system that it keeps in IndexedDB).
package main

import (
	"fmt"
	"syscall/js"

	"github.com/packlab/packlab/app"
	"github.com/packlab/packlab/app/browser"
)

func main() {
	host := js.Global().Get("packlabHost")
	if host.Type() != js.TypeObject {
		fmt.Println("packlab.wasm: no globalThis.packlabHost: load it through frontend/js/wasm-worker.js")
		return
	}
	dir := "/results"
	if d := host.Get("resultsDir"); d.Type() == js.TypeString {
		dir = d.String()
	}
	if _, err := browser.Bind(host, app.Options{ResultsDir: dir}); err != nil {
		if f := host.Get("fatal"); f.Type() == js.TypeFunction {
			f.Invoke(err.Error())
		}
		fmt.Println("packlab.wasm:", err)
		return
	}
	select {} // serve calls until the worker is stopped
}
