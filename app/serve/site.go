package serve

import "io/fs"

// Embedded is the browser lab's site (the folder `make web` builds) inside
// this binary, or nil: main sets it in a binary built with -tags embedweb
// after `make web` (make web-binary does both), whose `packlab serve` then
// needs no site folder and no Go toolchain.
var Embedded fs.FS

// EmbeddedSite is Embedded if it holds a built site, else nil.
func EmbeddedSite() fs.FS {
	if Embedded == nil {
		return nil
	}
	if _, err := fs.Stat(Embedded, siteStamp); err != nil {
		return nil
	}
	return Embedded
}
