//go:build desktop

package main

import (
	_ "embed"

	"github.com/packlab/packlab/app/desktop"
)

//go:embed build/appicon.png
var appIcon []byte

func init() { desktop.Icon = appIcon }
