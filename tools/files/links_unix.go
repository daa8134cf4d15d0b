//go:build unix

package files

import (
	"io/fs"
	"os"
	"syscall"
)

// linkCount returns how many hard links (names) the file of info has, or
// 1 when the platform does not say. fh, the open file, is unused here.
func linkCount(_ *os.File, info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
