// Package desktop is the desktop face: the Wails v2 window over app.Lab.
// desktop.go, built with the tag desktop, is the only place that imports
// Wails; it gives the lab its events and native dialogs and nothing else.
// Without the tag (nodesktop.go) the binary has no window, and packlab with
// no subcommand prints its help. Build the window with
//
//	go build -tags desktop,production,webkit2_41 -o bin/packlab-desktop .
//
// (Debian packages: build-essential pkg-config libgtk-3-dev
// libwebkit2gtk-4.1-dev; `make desktop` installs them and builds it).
package desktop
