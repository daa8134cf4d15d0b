//go:build windows

package files

import (
	"io/fs"
	"os"
	"syscall"
)

// linkCount returns how many hard links (names) the open file fh has, or
// 1 when it cannot be told: Windows reports the count only for an open
// file, so without fh (a listing) it is 1.
func linkCount(fh *os.File, _ fs.FileInfo) uint64 {
	if fh == nil {
		return 1
	}
	var d syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(syscall.Handle(fh.Fd()), &d); err != nil {
		return 1
	}
	return uint64(d.NumberOfLinks)
}
