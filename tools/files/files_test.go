package files_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/files"
)

// tree makes a root folder with a few files and returns its path and the
// path of a sibling folder "outside" holding secret.txt.
func tree(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "root")
	outside = filepath.Join(base, "outside")
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(base, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("root/a.md", "# Title\nline two\nline three\n")
	write("root/notes/todo.txt", "buy milk\nTODO: call Bob\n")
	write("root/notes/deep/x.go", "package x\n\nfunc Foo() {}\n")
	write("root/.git/config", "[core]\nsecret = git\n")
	write("root/.hidden", "hidden but allowed\n")
	write("root/bin.dat", "\x00\x01\x02binary\x00data")
	write("outside/secret.txt", "TOP SECRET\n")
	return root, outside
}

// symlinks adds links inside root: some leave it, some stay in it.
func symlinks(t *testing.T, root, outside string) {
	t.Helper()
	links := map[string]string{
		"out_file": "../outside/secret.txt",
		"out_abs":  filepath.Join(outside, "secret.txt"),
		"out_dir":  "../outside",
		"c1":       "c2",
		"c2":       "c3",
		"c3":       "../outside/secret.txt",
		"i1":       "i2",
		"i2":       "a.md",
		"in_dir":   "notes",
		"loop1":    "loop2",
		"loop2":    "loop1",
		"dangling": "nowhere.txt",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Skipf("symbolic links unsupported here: %v", err)
		}
	}
}

func newFS(t *testing.T, cfg files.Config) *files.FS {
	t.Helper()
	f, err := files.New(cfg)
	require.NoError(t, err)
	return f
}

// tool returns the named tool of f.
func tool(t *testing.T, f *files.FS, name string) tools.Tool {
	t.Helper()
	for _, tl := range f.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

func call(t *testing.T, tl tools.Tool, args any) (string, error) {
	t.Helper()
	in, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		require.NoError(t, err)
		in = string(b)
	}
	return tl.Call(context.Background(), in)
}

func TestNewChecksTheRoot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	for name, cfg := range map[string]files.Config{
		"empty":    {},
		"missing":  {Root: filepath.Join(dir, "nope")},
		"file":     {Root: file},
		"negative": {Root: dir, MaxReadBytes: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := files.New(cfg)
			require.ErrorIs(t, err, files.ErrInvalidConfig)
		})
	}
}

func TestToolsAndMeta(t *testing.T) {
	root, _ := tree(t)
	f := newFS(t, files.Config{Root: root})
	var names []string
	for _, tl := range f.Tools() {
		names = append(names, tl.Name())
		m := tools.MetaOf(tl)
		assert.True(t, m.ReadOnly, tl.Name())
		assert.False(t, m.NeedsApproval, tl.Name())
		assert.Equal(t, files.DefaultTimeout, m.Timeout)
		assert.Equal(t, tools.CleanDescription(tl.Description()), tl.Description(), "description of %s is not one clean line", tl.Name())
		schema := tools.SchemaOf(tl)
		assert.Equal(t, "object", schema["type"])
		_, err := json.Marshal(schema)
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"list_files", "read_file", "search_files"}, names, "no write_file without Write")

	w := tool(t, newFS(t, files.Config{Root: root, Write: true}), files.WriteName)
	m := tools.MetaOf(w)
	assert.True(t, m.NeedsApproval, "write_file needs approval by default")
	assert.False(t, m.ReadOnly)
	no := false
	w = tool(t, newFS(t, files.Config{Root: root, Write: true, ApproveWrites: &no}), files.WriteName)
	assert.False(t, tools.MetaOf(w).NeedsApproval)

	reg, err := tools.NewRegistry(f.Tools())
	require.NoError(t, err)
	out, err := reg.Call(context.Background(), "ReadFile", "a.md")
	require.NoError(t, err)
	assert.Contains(t, out, "line two")
}

func TestListFiles(t *testing.T) {
	root, _ := tree(t)
	ls := tool(t, newFS(t, files.Config{Root: root}), files.ListName)

	out, err := call(t, ls, "")
	require.NoError(t, err)
	assert.Equal(t, `Folder ".", depth 1:
file  .hidden  (19 bytes)
file  a.md  (28 bytes)
file  bin.dat  (14 bytes)
dir   notes/
(4 entries)
`, out)
	assert.NotContains(t, out, ".git", ".git is skipped")

	out, err = call(t, ls, map[string]any{"path": "notes", "recursive": true})
	require.NoError(t, err)
	assert.Equal(t, `Folder "notes", depth 8:
dir   notes/deep/
file  notes/deep/x.go  (25 bytes)
file  notes/todo.txt  (24 bytes)
(3 entries)
`, out)

	out, err = call(t, ls, map[string]any{"pattern": "*.go", "depth": "3"})
	require.NoError(t, err)
	assert.Contains(t, out, "file  notes/deep/x.go")
	assert.Contains(t, out, "(1 entry)")

	out, err = call(t, ls, map[string]any{"pattern": "*.go"})
	require.NoError(t, err)
	assert.Contains(t, out, "no entries match")
	assert.Contains(t, out, "depth greater than 1")

	out, err = call(t, ls, map[string]any{"dir": "a.md"})
	require.NoError(t, err)
	assert.Contains(t, out, "file  a.md  (28 bytes)")

	out, err = call(t, ls, map[string]any{"depth": 99})
	require.NoError(t, err)
	assert.Contains(t, out, "depth 8 (depth 99 asked; 8 is the greatest)")

	withGit := tool(t, newFS(t, files.Config{Root: root, IncludeGit: true}), files.ListName)
	out, err = call(t, withGit, "")
	require.NoError(t, err)
	assert.Contains(t, out, "dir   .git/")

	_, err = call(t, ls, map[string]any{"pattern": "[x"})
	require.ErrorIs(t, err, files.ErrBadPattern)
	_, err = call(t, ls, map[string]any{"depth": 0})
	require.ErrorIs(t, err, files.ErrBadArgument)
	_, err = call(t, ls, map[string]any{"depth": "deep"})
	require.ErrorIs(t, err, files.ErrBadArgument)
	_, err = call(t, ls, map[string]any{"colour": "red"})
	require.ErrorIs(t, err, tools.ErrBadInput)
	assert.Contains(t, err.Error(), "path, pattern, depth, recursive")
}

func TestListFilesCapsEntries(t *testing.T) {
	root := t.TempDir()
	for i := range 30 {
		require.NoError(t, os.WriteFile(filepath.Join(root, fmt.Sprintf("f%02d.txt", i)), []byte("x"), 0o644))
	}
	ls := tool(t, newFS(t, files.Config{Root: root, MaxEntries: 10}), files.ListName)
	out, err := call(t, ls, ".")
	require.NoError(t, err)
	assert.Equal(t, 10, strings.Count(out, "file  "))
	assert.Contains(t, out, "(10 of 30 entries shown; 20 more not shown")
	assert.Contains(t, out, "f09.txt")
	assert.NotContains(t, out, "f10.txt")
}

func TestReadFile(t *testing.T) {
	root, _ := tree(t)
	rd := tool(t, newFS(t, files.Config{Root: root}), files.ReadName)

	out, err := call(t, rd, "a.md")
	require.NoError(t, err)
	assert.Equal(t, "# Title\nline two\nline three\n", out)

	for _, in := range []string{` "a.md" `, `{"path": "./a.md"}`, `{"file": "notes/../a.md"}`, `{"Path": "a.md", "start_line": null}`} {
		out, err = call(t, rd, in)
		require.NoError(t, err, in)
		assert.Equal(t, "# Title\nline two\nline three\n", out, in)
	}

	out, err = call(t, rd, map[string]any{"path": "a.md", "start_line": 2, "end_line": "2", "line_numbers": true})
	require.NoError(t, err)
	assert.Equal(t, "     2| line two\n[lines 2-2 shown]\n", out)

	out, err = call(t, rd, map[string]any{"path": "a.md", "start_line": 2})
	require.NoError(t, err)
	assert.Equal(t, "line two\nline three\n[lines 2-3 shown; the file ends there]\n", out)

	out, err = call(t, rd, ".hidden")
	require.NoError(t, err)
	assert.Equal(t, "hidden but allowed\n", out)

	numbered := tool(t, newFS(t, files.Config{Root: root, LineNumbers: true}), files.ReadName)
	out, err = call(t, numbered, "a.md")
	require.NoError(t, err)
	assert.Equal(t, "     1| # Title\n     2| line two\n     3| line three\n", out)

	_, err = call(t, rd, map[string]any{"path": "a.md", "start_line": 9})
	require.ErrorIs(t, err, files.ErrBadArgument)
	assert.Contains(t, err.Error(), "has 3 lines")
	_, err = call(t, rd, map[string]any{"path": "a.md", "start_line": 3, "end_line": 2})
	require.ErrorIs(t, err, files.ErrBadArgument)
	_, err = call(t, rd, map[string]any{"path": "a.md", "start_line": 1.5})
	require.ErrorIs(t, err, files.ErrBadArgument)
	_, err = call(t, rd, `{"path": "a.md"`)
	require.ErrorIs(t, err, files.ErrBadArgument)

	require.NoError(t, os.WriteFile(filepath.Join(root, "empty.txt"), nil, 0o644))
	out, err = call(t, rd, "empty.txt")
	require.NoError(t, err)
	assert.Equal(t, "(empty file)\n", out)

	require.NoError(t, os.WriteFile(filepath.Join(root, "latin.txt"), []byte("caf\xe9 ok\r\nnext\r\n"), 0o644))
	out, err = call(t, rd, "latin.txt")
	require.NoError(t, err)
	assert.Equal(t, "caf\uFFFD ok\nnext\n", out, "invalid UTF-8 is replaced, CRLF shown as LF")
}

func TestReadFileCapsOutputWithAMarker(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "line %04d of the big file\n", i) // 26 bytes a line
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "big.txt"), []byte(b.String()), 0o644))
	rd := tool(t, newFS(t, files.Config{Root: root, MaxReadBytes: 1000}), files.ReadName)

	out, err := call(t, rd, "big.txt")
	require.NoError(t, err)
	assert.LessOrEqual(t, len(out), 1000+200)
	assert.True(t, strings.HasPrefix(out, "line 0001 of the big file\n"))
	assert.Contains(t, out, "line 0038 of the big file\n")
	assert.NotContains(t, out, "line 0039")
	assert.Contains(t, out, "[output capped at 1,000 bytes: lines 1-38 shown of a 26,000 bytes file. To read on, call read_file with start_line=39]")

	out, err = call(t, rd, map[string]any{"path": "big.txt", "start_line": 39})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "line 0039 of the big file\n"), out)

	out, err = call(t, rd, map[string]any{"path": "big.txt", "start_line": 990})
	require.NoError(t, err)
	assert.Contains(t, out, "line 1000 of the big file\n[lines 990-1000 shown; the file ends there]\n")

	long := strings.Repeat("é", 3000) + "\nsecond\n"
	require.NoError(t, os.WriteFile(filepath.Join(root, "long.txt"), []byte(long), 0o644))
	out, err = call(t, rd, "long.txt")
	require.NoError(t, err)
	assert.Contains(t, out, "[line 1 is longer than the 1,000-byte cap; only its first 1,000 bytes are shown. Read on from the next line with start_line=2]")
	assert.True(t, strings.HasPrefix(out, strings.Repeat("é", 500)+"\n"))
}

func TestSearchFiles(t *testing.T) {
	root, _ := tree(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "huge.txt"), []byte(strings.Repeat("needle\n", 200)), 0o644))
	sr := tool(t, newFS(t, files.Config{Root: root, MaxSearchFileBytes: 1000}), files.SearchName)

	out, err := call(t, sr, "TODO|Foo")
	require.NoError(t, err)
	assert.Equal(t, `notes/deep/x.go:3: func Foo() {}
notes/todo.txt:2: TODO: call Bob
(2 matching lines in 2 files)
(skipped 1 binary file, 1 file over 1,000 bytes)
`, out)

	out, err = call(t, sr, map[string]any{"pattern": "foo()", "literal": true, "ignore_case": true})
	require.NoError(t, err)
	assert.Contains(t, out, "notes/deep/x.go:3: func Foo() {}")

	out, err = call(t, sr, map[string]any{"query": "line", "glob": "*.md"})
	require.NoError(t, err)
	assert.Equal(t, "a.md:2: line two\na.md:3: line three\n(2 matching lines in 1 file)\n", out)

	out, err = call(t, sr, map[string]any{"pattern": "call", "path": "notes/todo.txt"})
	require.NoError(t, err)
	assert.Contains(t, out, "notes/todo.txt:2: TODO: call Bob")

	out, err = call(t, sr, "secret")
	require.NoError(t, err)
	assert.Contains(t, out, "No matches for \"secret\"")

	withGit := tool(t, newFS(t, files.Config{Root: root, IncludeGit: true}), files.SearchName)
	out, err = call(t, withGit, "secret")
	require.NoError(t, err)
	assert.Contains(t, out, ".git/config:2: secret = git")

	_, err = call(t, sr, "func Foo(")
	require.ErrorIs(t, err, files.ErrBadPattern)
	require.ErrorIs(t, err, tools.ErrBadInput)
	assert.Contains(t, err.Error(), "literal: true")
	_, err = call(t, sr, map[string]any{"pattern": "x", "glob": "[a"})
	require.ErrorIs(t, err, files.ErrBadPattern)
	_, err = call(t, sr, map[string]any{"pattern": ""})
	require.ErrorIs(t, err, files.ErrBadPattern)
	_, err = call(t, sr, map[string]any{"pattern": "x", "path": "bin.dat"})
	require.ErrorIs(t, err, files.ErrBinary)
}

func TestSearchFilesCapsMatches(t *testing.T) {
	root := t.TempDir()
	line := strings.Repeat("x", 300) + " needle " + strings.Repeat("y", 300)
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte(strings.Repeat(line+"\n", 20)), 0o644))
	sr := tool(t, newFS(t, files.Config{Root: root, MaxMatches: 5}), files.SearchName)
	out, err := call(t, sr, "needle")
	require.NoError(t, err)
	assert.Equal(t, 5, strings.Count(out, "a.txt:"))
	assert.Contains(t, out, "(5 of 20 matching lines shown, from 1 file; narrow the pattern")
	first := strings.SplitN(out, "\n", 2)[0]
	assert.Contains(t, first, "needle")
	assert.Less(t, len(first), 260, "a long line is cut around the match")
	assert.True(t, strings.HasPrefix(first, "a.txt:1: …x"), first)
	assert.True(t, strings.HasSuffix(first, "y…"), first)
}

func TestWriteFile(t *testing.T) {
	root, _ := tree(t)
	wr := tool(t, newFS(t, files.Config{Root: root, Write: true, MaxWriteBytes: 100}), files.WriteName)

	out, err := call(t, wr, map[string]any{"path": "new/sub/n.txt", "content": "hello\n"})
	require.NoError(t, err)
	assert.Equal(t, "Created new/sub/n.txt (6 bytes).", out)
	got, err := os.ReadFile(filepath.Join(root, "new", "sub", "n.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(got))

	out, err = call(t, wr, map[string]any{"path": "new/sub/n.txt", "content": "more\n", "append": true})
	require.NoError(t, err)
	assert.Equal(t, "Appended 5 bytes to new/sub/n.txt (now 11 bytes).", out)

	out, err = call(t, wr, map[string]any{"file": "a.md", "text": "replaced"})
	require.NoError(t, err)
	assert.Equal(t, "Overwrote a.md (8 bytes; it had 28 bytes).", out)
	got, err = os.ReadFile(filepath.Join(root, "a.md"))
	require.NoError(t, err)
	assert.Equal(t, "replaced", string(got))

	out, err = call(t, wr, map[string]any{"path": "empty.txt", "content": ""})
	require.NoError(t, err)
	assert.Equal(t, "Created empty.txt (0 bytes).", out)

	_, err = call(t, wr, map[string]any{"path": "big.txt", "content": strings.Repeat("x", 101)})
	require.ErrorIs(t, err, files.ErrTooLarge)
	assert.NoFileExists(t, filepath.Join(root, "big.txt"))
	_, err = call(t, wr, map[string]any{"path": "x.txt"})
	require.ErrorIs(t, err, files.ErrBadArgument)
	_, err = call(t, wr, "x.txt")
	require.ErrorIs(t, err, files.ErrBadArgument, "write_file needs JSON")
	_, err = call(t, wr, map[string]any{"path": "notes", "content": "x"})
	require.ErrorIs(t, err, files.ErrNotFile)
	_, err = call(t, wr, map[string]any{"path": "notes/", "content": "x"})
	require.ErrorIs(t, err, files.ErrNotFile)
	_, err = call(t, wr, map[string]any{"path": ".git/hooks/pre-commit", "content": "rm -rf /"})
	require.ErrorIs(t, err, files.ErrReadOnlyPath)
	assert.NoFileExists(t, filepath.Join(root, ".git", "hooks", "pre-commit"))
	_, err = call(t, wr, map[string]any{"path": "a.md/x", "content": "x"})
	require.Error(t, err)
}

func TestConcurrentCalls(t *testing.T) {
	root, _ := tree(t)
	f := newFS(t, files.Config{Root: root, Write: true})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for _, tl := range f.Tools() {
				in := map[string]any{"path": "a.md"}
				switch tl.Name() {
				case files.SearchName:
					in = map[string]any{"pattern": "line"}
				case files.ListName:
					in = map[string]any{"recursive": true}
				case files.WriteName:
					in = map[string]any{"path": fmt.Sprintf("out/%d.txt", i), "content": "x"}
				}
				_, err := call(t, tl, in)
				assert.NoError(t, err, tl.Name())
			}
		})
	}
	wg.Wait()
}

func TestCancelledContext(t *testing.T) {
	root, _ := tree(t)
	f := newFS(t, files.Config{Root: root})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tool(t, f, files.SearchName).Call(ctx, "line")
	require.ErrorIs(t, err, context.Canceled)
	_, err = tool(t, f, files.ListName).Call(ctx, ".")
	require.ErrorIs(t, err, context.Canceled)
}

func TestWalksStopAtTheTimeLimit(t *testing.T) {
	root, _ := tree(t)
	// A 1ns timeout puts the soft deadline before the first entry.
	f := newFS(t, files.Config{Root: root, Timeout: time.Nanosecond})
	out, err := call(t, tool(t, f, files.ListName), map[string]any{"recursive": true})
	require.NoError(t, err)
	assert.Contains(t, out, "(the walk stopped at the time limit; narrow the path; the counts above are incomplete)")
	out, err = call(t, tool(t, f, files.SearchName), "line")
	require.NoError(t, err)
	assert.Contains(t, out, "(the walk stopped at the time limit; narrow the path; not every file was searched)")
}
