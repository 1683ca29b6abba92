//go:build embedweb

package main

// Built with -tags embedweb after `make web` (make web-binary does both), the
// binary carries the browser lab's site: `packlab serve` then needs no site
// folder and no Go toolchain.

import (
	"embed"
	"io/fs"

	"github.com/packlab/packlab/app/serve"
)

//go:embed build/web
var webFiles embed.FS

func init() {
	if site, err := fs.Sub(webFiles, "build/web"); err == nil {
		serve.Embedded = site
	}
}
