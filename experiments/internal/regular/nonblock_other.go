//go:build !unix

package regular

// OpenNonblock: outside Unix there are no named pipes in the file system to
// block an open, and js/wasm has no O_NONBLOCK.
const OpenNonblock = 0
