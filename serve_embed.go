//go:build embedweb

package main

// Built with -tags embedweb after `make web` (make web-binary does both), the
// binary carries the browser lab's site: `packlab serve` then needs no site
// folder and no Go toolchain.

import (
	"embed"
	"io/fs"
)

//go:embed build/web
var webFiles embed.FS

// embeddedSite is build/web as it was when this binary was built.
func embeddedSite() fs.FS {
	site, err := fs.Sub(webFiles, "build/web")
	if err != nil {
		return nil
	}
	if _, err := fs.Stat(site, siteStamp); err != nil {
		return nil
	}
	return site
}
