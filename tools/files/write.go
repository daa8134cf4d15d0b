package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/planner-engine/planner/tools"
)

// writeTool is write_file.
type writeTool struct{ fs *FS }

var (
	_ tools.Tool         = (*writeTool)(nil)
	_ tools.Schemer      = (*writeTool)(nil)
	_ tools.MetaProvider = (*writeTool)(nil)
)

func (t *writeTool) spec() argSpec {
	return argSpec{
		tool:  WriteName,
		names: []string{"path", "content", "append"},
		aliases: map[string]string{
			"file": "path", "filename": "path", "file_path": "path", "filepath": "path", "file_name": "path",
			"contents": "content", "text": "content", "data": "content", "body": "content",
		},
	}
}

// Name returns "write_file".
func (t *writeTool) Name() string { return WriteName }

// Description tells the model what write_file does.
func (t *writeTool) Description() string {
	return fmt.Sprintf("Creates or overwrites a text file of the file area, making its folders as needed. "+
		"Input: JSON arguments path (relative to the root folder), content (the whole new text of the file) and "+
		"append (true to add content to the end of the file instead). At most %s bytes per call; write a longer file "+
		"in parts with append: true.", itoa(t.fs.cfg.MaxWriteBytes))
}

// Schema declares the arguments path, content and append.
func (t *writeTool) Schema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"path":    map[string]any{"type": "string", "description": "The file's path, relative to the root folder."},
			"content": map[string]any{"type": "string", "description": "The text to write."},
			"append":  map[string]any{"type": "boolean", "description": "Add the content to the end of the file instead of replacing it. Default false."},
		},
		"required": []any{"path", "content"},
	}
}

// Meta reports a tool with side effects that needs approval unless
// Config.ApproveWrites is false.
func (t *writeTool) Meta() tools.Meta {
	return tools.Meta{NeedsApproval: *t.fs.cfg.ApproveWrites, Timeout: t.fs.cfg.Timeout}
}

// Call writes a file.
func (t *writeTool) Call(ctx context.Context, input string) (string, error) {
	a, err := parseArgs(t.spec(), input)
	if err != nil {
		return "", err
	}
	p, _, err := a.str(WriteName, "path")
	if err != nil {
		return "", err
	}
	content, ok, err := a.str(WriteName, "content")
	if err != nil {
		return "", err
	}
	if !ok {
		return "", tools.BadInput(ErrBadArgument, "%s needs content, the text to write (\"\" makes an empty file)", WriteName)
	}
	appendTo, _, err := a.boolean(WriteName, "append")
	if err != nil {
		return "", err
	}
	return t.fs.write(ctx, p, content, appendTo)
}

func (f *FS) write(ctx context.Context, p, content string, appendTo bool) (string, error) {
	rel, err := cleanPath(p, false)
	if err != nil {
		return "", err
	}
	if rel == "." || strings.HasSuffix(strings.TrimSpace(p), "/") {
		return "", tools.BadInput(ErrNotFile, "%q names a folder; give the path of a file", display(rel))
	}
	if hasGitComponent(rel) {
		return "", tools.BadInput(ErrReadOnlyPath, "%q is inside a .git folder, which %s never changes", display(rel), WriteName)
	}
	if len(content) > f.cfg.MaxWriteBytes {
		return "", tools.BadInput(ErrTooLarge, "the content is %s; at most %s can be written per call, so write the file in parts with append: true",
			plural(len(content), "byte", "bytes"), plural(f.cfg.MaxWriteBytes, "byte", "bytes"))
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	root, err := f.openRoot()
	if err != nil {
		return "", err
	}
	defer root.Close()

	before, err := root.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !isEscape(err):
		before = nil
		if dir := filepath.Dir(rel); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return "", pathError(dir, err)
			}
		}
	case err != nil:
		return "", pathError(rel, err)
	case before.IsDir():
		return "", tools.BadInput(ErrNotFile, "%q is a folder; give the path of a file", display(rel))
	case !before.Mode().IsRegular():
		return "", tools.BadInput(ErrNotFile, "%q is a special file, not a regular file", display(rel))
	default:
		if err := checkLinks(rel, WriteName, nil, before); err != nil {
			return "", err
		}
	}

	// The file is truncated only once the open file is known to be a
	// regular one of a single link (O_TRUNC would cut it before).
	flag := os.O_WRONLY | os.O_CREATE | syscall.O_NONBLOCK
	if appendTo {
		flag |= os.O_APPEND
	}
	fh, err := root.OpenFile(rel, flag, 0o644)
	if err != nil {
		return "", pathError(rel, err)
	}
	info, err := fh.Stat()
	if err != nil || !info.Mode().IsRegular() {
		_ = fh.Close()
		return "", tools.BadInput(ErrNotFile, "%q is not a regular file", display(rel))
	}
	if err := checkLinks(rel, WriteName, fh, info); err != nil {
		_ = fh.Close()
		return "", err
	}
	if !appendTo {
		if err := fh.Truncate(0); err != nil {
			_ = fh.Close()
			return "", pathError(rel, err)
		}
	}
	_, werr := fh.WriteString(content)
	cerr := fh.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return "", pathError(rel, err)
	}
	after, err := root.Stat(rel)
	size := int64(len(content))
	if err == nil {
		size = after.Size()
	}
	n := plural(len(content), "byte", "bytes")
	switch {
	case before == nil:
		return fmt.Sprintf("Created %s (%s).", display(rel), n), nil
	case appendTo:
		return fmt.Sprintf("Appended %s to %s (now %s).", n, display(rel), plural(size, "byte", "bytes")), nil
	}
	return fmt.Sprintf("Overwrote %s (%s; it had %s).", display(rel), n, plural(before.Size(), "byte", "bytes")), nil
}
