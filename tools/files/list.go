package files

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/planner-engine/planner/tools"
)

// listTool is list_files.
type listTool struct{ fs *FS }

var (
	_ tools.Tool         = (*listTool)(nil)
	_ tools.Schemer      = (*listTool)(nil)
	_ tools.MetaProvider = (*listTool)(nil)
)

func (t *listTool) spec() argSpec {
	return argSpec{
		tool: ListName, main: "path",
		names:   []string{"path", "pattern", "depth", "recursive"},
		aliases: map[string]string{"input": "path", "dir": "path", "directory": "path", "folder": "path", "glob": "pattern", "filter": "pattern", "max_depth": "depth", "level": "depth"},
	}
}

// Name returns "list_files".
func (t *listTool) Name() string { return ListName }

// Description tells the model what list_files does.
func (t *listTool) Description() string {
	return fmt.Sprintf("Lists the files and folders in a folder of the file area, with each entry's type and size. "+
		"Paths are relative to the root folder (\".\" is the root). Input: a folder path, or JSON arguments path, "+
		"pattern (a glob matched against entry names, such as \"*.md\"), depth (1, the default, lists the folder's own entries; "+
		"up to %d goes into subfolders) and recursive (true for the greatest depth). Shows at most %s entries.",
		t.fs.cfg.MaxDepth, itoa(t.fs.cfg.MaxEntries))
}

// Schema declares the arguments path, pattern, depth and recursive.
func (t *listTool) Schema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"path":      map[string]any{"type": "string", "description": "Folder to list, relative to the root folder. Default \".\", the root."},
			"pattern":   map[string]any{"type": "string", "description": "Glob that entry names must match, such as \"*.md\"; with a '/', matched against the path below the listed folder."},
			"depth":     map[string]any{"type": "integer", "minimum": 1, "maximum": t.fs.cfg.MaxDepth, "description": "How many folder levels to list; 1 (default) lists only the folder's own entries."},
			"recursive": map[string]any{"type": "boolean", "description": "List all levels, up to the greatest depth."},
		},
	}
}

// Meta reports a read-only tool.
func (t *listTool) Meta() tools.Meta { return t.fs.readMeta() }

// Call lists a folder.
func (t *listTool) Call(ctx context.Context, input string) (string, error) {
	a, err := parseArgs(t.spec(), input)
	if err != nil {
		return "", err
	}
	p, _, err := a.str(ListName, "path")
	if err != nil {
		return "", err
	}
	pattern, _, err := a.str(ListName, "pattern")
	if err != nil {
		return "", err
	}
	depth, hasDepth, err := a.integer(ListName, "depth")
	if err != nil {
		return "", err
	}
	recursive, _, err := a.boolean(ListName, "recursive")
	if err != nil {
		return "", err
	}
	return t.fs.list(ctx, p, strings.TrimSpace(pattern), depth, hasDepth, recursive)
}

func (f *FS) list(ctx context.Context, p, pattern string, depth int, hasDepth, recursive bool) (string, error) {
	rel, err := cleanPath(p, true)
	if err != nil {
		return "", err
	}
	if pattern != "" {
		if err := checkGlob(pattern); err != nil {
			return "", err
		}
	}
	clamped := ""
	switch {
	case recursive && !hasDepth:
		depth = f.cfg.MaxDepth
	case !hasDepth:
		depth = 1
	case depth < 1:
		return "", tools.BadInput(ErrBadArgument, "%s: depth must be at least 1", ListName)
	case depth > f.cfg.MaxDepth:
		clamped = fmt.Sprintf(" (depth %d asked; %d is the greatest)", depth, f.cfg.MaxDepth)
		depth = f.cfg.MaxDepth
	}
	root, info, err := f.openStat(rel)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if !info.IsDir() {
		if pattern == "" || matchGlob(pattern, filepath.Base(rel)) {
			e := entry{rel: rel, kind: kindOther}
			if info.Mode().IsRegular() {
				e.kind, e.size, e.links = kindFile, info.Size(), linkCount(nil, info)
			}
			return "A file, not a folder:\n" + formatEntry(e) + "\n", nil
		}
		return "", tools.BadInput(ErrNotDir, "%q is a file, not a folder", display(rel))
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Folder %q, depth %d%s", display(rel), depth, clamped)
	if pattern != "" {
		fmt.Fprintf(&b, ", entries matching %q", pattern)
	}
	b.WriteString(":\n")
	shown, total := 0, 0
	w := &walker{root: root, maxDepth: depth, includeGit: f.cfg.IncludeGit, deadline: f.softDeadline()}
	end, err := w.walk(ctx, rel, 1, func(e entry) bool {
		below, _ := filepath.Rel(rel, e.rel)
		if !matchGlob(pattern, below) {
			return true
		}
		total++
		if shown < f.cfg.MaxEntries {
			shown++
			b.WriteString(formatEntry(e))
			b.WriteByte('\n')
		}
		return true
	})
	if err != nil {
		return "", err
	}
	switch {
	case total == 0 && pattern != "":
		fmt.Fprintf(&b, "(no entries match %q", pattern)
		if depth == 1 {
			b.WriteString("; give a depth greater than 1 or recursive: true to look in subfolders")
		}
		b.WriteString(")\n")
	case total == 0:
		b.WriteString("(empty folder)\n")
	case shown < total:
		fmt.Fprintf(&b, "(%s of %s entries shown; %s more not shown: give a pattern, a smaller depth or a subfolder to see them)\n",
			itoa(shown), itoa(total), itoa(total-shown))
	default:
		fmt.Fprintf(&b, "(%s)\n", plural(total, "entry", "entries"))
	}
	if n := end.note(); n != "" {
		fmt.Fprintf(&b, "(%s; the counts above are incomplete)\n", n)
	}
	if w.unreadable > 0 {
		fmt.Fprintf(&b, "(%s could not be read)\n", plural(w.unreadable, "folder", "folders"))
	}
	return b.String(), nil
}

// formatEntry renders one listing line: type, path, size.
func formatEntry(e entry) string {
	p := display(e.rel)
	switch {
	case e.kind == kindOutside:
		return "link  " + p + "  (a symbolic link that leads outside the root folder or nowhere; not accessible)"
	case e.link && e.kind == kindDir:
		return "link  " + p + "/  (a symbolic link to a folder; list it by its path)"
	case e.link && e.kind == kindFile:
		return "link  " + p + "  (a symbolic link to a file, " + plural(e.size, "byte", "bytes") + ")"
	case e.kind == kindDir:
		return "dir   " + p + "/"
	case e.kind == kindFile && e.links > 1:
		return "file  " + p + "  (" + plural(e.size, "byte", "bytes") + "; " + itoa(int64(e.links)) + " hard links, so not accessible)"
	case e.kind == kindFile:
		return "file  " + p + "  (" + plural(e.size, "byte", "bytes") + ")"
	}
	return "other " + p + "  (a special file, not readable)"
}
