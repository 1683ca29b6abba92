//go:build !embedweb

package main

import "io/fs"

// embeddedSite is the browser lab's site inside this binary: none in a
// plain build (see serve_embed.go for the one with it).
func embeddedSite() fs.FS { return nil }
