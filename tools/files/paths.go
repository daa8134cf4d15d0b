package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/planner-engine/planner/tools"
)

// cleanPath checks a path the model gave and returns it cleaned, in the
// host's separators, relative to the root. An empty path is the root when
// dflt is true and an error otherwise. The checks here are lexical; os.Root
// checks symbolic links when the path is opened.
func cleanPath(p string, dflt bool) (string, error) {
	p = strings.TrimSpace(p)
	if strings.IndexByte(p, 0) >= 0 {
		return "", tools.BadInput(ErrBadPath, "the path contains a NUL byte")
	}
	if p == "" {
		if dflt {
			return ".", nil
		}
		return "", tools.BadInput(ErrBadPath, "a path is required, relative to the root folder, such as \"notes/todo.md\"")
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || filepath.VolumeName(p) != "" {
		return "", tools.BadInput(ErrOutsideRoot, "%q is an absolute path; give a path relative to the root folder instead (\".\" is the root itself)", p)
	}
	c := filepath.Clean(filepath.FromSlash(p))
	if c == ".." || strings.HasPrefix(c, ".."+string(filepath.Separator)) {
		return "", tools.BadInput(ErrOutsideRoot, "%q climbs above the root folder; only files under the root can be reached", p)
	}
	return c, nil
}

// display renders a cleaned path for the model: slash-separated, relative
// to the root, "." for the root itself.
func display(rel string) string { return filepath.ToSlash(rel) }

// joinRel joins a cleaned relative directory and an entry name.
func joinRel(dir, name string) string {
	if dir == "." {
		return name
	}
	return filepath.Join(dir, name)
}

// hasGitComponent reports whether a cleaned relative path has a ".git"
// component.
func hasGitComponent(rel string) bool {
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if part == ".git" {
			return true
		}
	}
	return false
}

// isEscape reports whether err is os.Root's refusal of a path that
// resolves outside the root. os does not export that error, so its text
// identifies it; TestSymlinkOutsideRootIsRefused fails if it changes.
func isEscape(err error) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// pathError turns an error from the root's methods on rel into one for the
// model: the cause in words, never the host path of the root.
func pathError(rel string, err error) error {
	shown := display(rel)
	switch {
	case isEscape(err):
		return tools.BadInput(ErrOutsideRoot, "%q resolves outside the root folder (through a symbolic link); only files under the root can be reached", shown)
	case errors.Is(err, fs.ErrNotExist):
		return tools.BadInput(ErrNotFound, "%q does not exist (paths are relative to the root folder; list_files shows what is there)", shown)
	case errors.Is(err, syscall.ENOTDIR):
		return tools.BadInput(ErrNotFound, "%q does not exist: a part of it is a file, not a folder", shown)
	case errors.Is(err, syscall.ELOOP):
		return tools.BadInput(ErrBadPath, "%q is a loop of symbolic links", shown)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%q: permission denied: %w", shown, fs.ErrPermission)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%q: %w", shown, pe.Err)
	}
	return fmt.Errorf("%q: %w", shown, err)
}

// entryKind is what a directory entry is, symbolic links resolved.
type entryKind int

const (
	kindFile entryKind = iota
	kindDir
	kindOther
	// kindOutside is a symbolic link that leaves the root, or a broken one.
	kindOutside
)

// entry is one item a walk visits.
type entry struct {
	// rel is the cleaned path relative to the root.
	rel   string
	kind  entryKind
	link  bool
	size  int64
	depth int
	// links is how many hard links a regular file has (see linkCount).
	links uint64
}

// statEntry describes the entry name in the directory dir.
func statEntry(root *os.Root, dir string, d fs.DirEntry, depth int) entry {
	e := entry{rel: joinRel(dir, d.Name()), depth: depth}
	t := d.Type()
	var info fs.FileInfo
	var err error
	if t&fs.ModeSymlink != 0 {
		e.link = true
		info, err = root.Stat(e.rel)
	} else {
		info, err = d.Info()
	}
	switch {
	case err != nil:
		e.kind = kindOutside
	case info.IsDir():
		e.kind = kindDir
	case info.Mode().IsRegular():
		e.kind, e.size, e.links = kindFile, info.Size(), linkCount(nil, info)
	default:
		e.kind = kindOther
	}
	return e
}

// checkLinks refuses a regular file of more than one hard link (see
// ErrHardLink): fh is the open file, or nil before it is opened, and
// info its metadata. tool names the tool that refuses.
func checkLinks(rel, tool string, fh *os.File, info fs.FileInfo) error {
	if n := linkCount(fh, info); n > 1 {
		return tools.BadInput(ErrHardLink, "%q has %d hard links (names for the same file), and one of them may lie outside the root folder; %s does not open files with more than one link. "+
			"Ask for a copy of the file instead of a link", display(rel), n, tool)
	}
	return nil
}

// matchGlob matches a glob pattern against an entry: against its path
// below the listed folder when the pattern has a slash, else its name.
func matchGlob(pattern, relToBase string) bool {
	if pattern == "" {
		return true
	}
	s := filepath.ToSlash(relToBase)
	if !strings.Contains(pattern, "/") {
		s = path.Base(s)
	}
	ok, _ := path.Match(pattern, s)
	return ok
}

// checkGlob reports a malformed glob pattern.
func checkGlob(pattern string) error {
	if _, err := path.Match(pattern, ""); err != nil {
		return tools.BadInput(ErrBadPattern, "glob %q: %v; use * ? and [...] as in \"*.md\"", pattern, err)
	}
	return nil
}

// openRead opens a file of the root for reading without blocking on a
// named pipe that replaced a regular file after it was checked.
func openRead(root *os.Root, rel string) (*os.File, error) {
	return root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
