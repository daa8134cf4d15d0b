package layout_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/planner-engine/planner/internal/layout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the generated table of floors in docs/architecture.md")

// architecturePage is the page that shows the floors, from this package's
// folder.
var architecturePage = filepath.Join("..", "..", "docs", "architecture.md")

// The generated table of floors sits between these lines of
// docs/architecture.md.
const (
	layersBegin = "<!-- layers:begin (generated from internal/layout.Layers: go test ./internal/layout -run TestDocs -update) -->\n"
	layersEnd   = "<!-- layers:end -->\n"
)

// packageName is how the table names a package of layout.Layers.
func packageName(pkg string) string {
	if pkg == "." {
		return "`" + module + "` (the root package)"
	}
	return "`" + pkg + "`"
}

// layerTable renders layers as a Markdown table, one row per floor from
// the bottom (floor 1) up: the floor's number, what it holds and its
// packages, then a line with the number of floors and the longest import
// chain allowed.
func layerTable(layers []layout.Layer, maxChain int) string {
	var b strings.Builder
	b.WriteString("| floor | what it holds | packages |\n|---|---|---|\n")
	for i, l := range layers {
		names := make([]string, len(l.Packages))
		for j, p := range l.Packages {
			names[j] = packageName(p)
		}
		fmt.Fprintf(&b, "| %d | %s | %s |\n", i+1, strings.ReplaceAll(l.Name, "|", `\|`), strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, "\n%d floors, floor 1 at the bottom. The longest chain of in-module imports between production packages may hold at most %d packages (`layout.MaxChain`).\n",
		len(layers), maxChain)
	return b.String()
}

func TestLayerTableRendersEveryFloor(t *testing.T) {
	got := layerTable([]layout.Layer{
		{Name: "the bottom", Packages: []string{"graph", "config"}},
		{Name: "a | b", Packages: []string{"."}},
	}, 7)
	want := "| floor | what it holds | packages |\n|---|---|---|\n" +
		"| 1 | the bottom | `graph`, `config` |\n" +
		"| 2 | a \\| b | `github.com/planner-engine/planner` (the root package) |\n" +
		"\n2 floors, floor 1 at the bottom. The longest chain of in-module imports between production packages may hold at most 7 packages (`layout.MaxChain`).\n"
	assert.Equal(t, want, got)
}

// TestDocsLayerTable keeps the table of floors in docs/architecture.md
// equal to layout.Layers. With -update it rewrites the table instead:
//
//	go test ./internal/layout -run TestDocs -update
func TestDocsLayerTable(t *testing.T) {
	b, err := os.ReadFile(architecturePage)
	require.NoError(t, err)
	page := string(b)
	require.Equal(t, 1, strings.Count(page, layersBegin), "docs/architecture.md holds the begin marker once:\n%s", layersBegin)
	require.Equal(t, 1, strings.Count(page, layersEnd), "docs/architecture.md holds the end marker once:\n%s", layersEnd)
	i, j := strings.Index(page, layersBegin), strings.Index(page, layersEnd)
	require.Less(t, i, j, "docs/architecture.md: the end marker comes after the begin marker")
	got := page[i+len(layersBegin) : j]
	want := layerTable(layout.Layers(), layout.MaxChain)
	if *update {
		if got != want {
			require.NoError(t, os.WriteFile(architecturePage, []byte(page[:i+len(layersBegin)]+want+page[j:]), 0o644))
			t.Logf("rewrote the table of floors in %s", architecturePage)
		}
		return
	}
	assert.Equal(t, want, got, "docs/architecture.md's table of floors is out of date: run go test ./internal/layout -run TestDocs -update")
}

// packageBullet matches a bullet of docs/architecture.md's package guide:
// "- `a`, `b`: what they own".
var packageBullet = regexp.MustCompile("^- ((?:`[^`]+`(?: \\(the root package\\))?(?:, )?)+):")

// TestDocsPackageGuideNamesRealPackages keeps the hand-written guide of
// docs/architecture.md ("What each package owns") from naming a package
// that moved or went: every package its bullets name is on a floor of
// layout.Layers.
func TestDocsPackageGuideNamesRealPackages(t *testing.T) {
	b, err := os.ReadFile(architecturePage)
	require.NoError(t, err)
	page := string(b)
	const begin, end = "<!-- packages:", "<!-- packages:end -->"
	i, j := strings.Index(page, begin), strings.Index(page, end)
	require.True(t, i >= 0 && j > i, "docs/architecture.md marks its package guide with %q ... %q", begin, end)
	known := map[string]bool{}
	for _, l := range layout.Layers() {
		for _, p := range l.Packages {
			known[p] = true
		}
	}
	named := 0
	for _, line := range strings.Split(page[i:j], "\n")[1:] {
		if line == "" {
			continue
		}
		m := packageBullet.FindStringSubmatch(line)
		if !assert.NotNil(t, m, "docs/architecture.md: a line of the package guide is not \"- `package`, ...: what it owns\": %q", line) {
			continue
		}
		for _, name := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[1], -1) {
			pkg := name[1]
			if pkg == module {
				pkg = "."
			}
			assert.True(t, known[pkg], "docs/architecture.md's package guide names %s, which is on no floor of layout.Layers", name[1])
			named++
		}
	}
	assert.Positive(t, named)
}

// maxContextValues is the most context.WithValue sites the module's
// production code may hold (see docs/architecture.md, "Run services and
// the six context values").
const maxContextValues = 6

// TestContextValuesAreTheDocumentedOnes keeps the run's services out of
// contexts: every production file that calls context.WithValue is one the
// table of docs/architecture.md lists, with one call each, and there are
// at most maxContextValues of them.
func TestContextValuesAreTheDocumentedOnes(t *testing.T) {
	b, err := os.ReadFile(architecturePage)
	require.NoError(t, err)
	page := string(b)
	const begin, end = "<!-- context-values:", "<!-- context-values: end -->"
	i, j := strings.Index(page, begin), strings.Index(page, end)
	require.True(t, i >= 0 && j > i, "docs/architecture.md marks its table of context values with %q ... %q", begin, end)
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+\\.go)` \\|").FindAllStringSubmatch(page[i:j], -1) {
		documented[m[1]] = true
	}
	require.NotEmpty(t, documented, "the table lists no file")

	root := filepath.Join("..", "..")
	found := map[string]int{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := strings.Count(string(src), "context.WithValue("); n > 0 {
			rel, _ := filepath.Rel(root, path)
			found[filepath.ToSlash(rel)] = n
		}
		return nil
	})
	require.NoError(t, err)
	total := 0
	for file, n := range found {
		total += n
		assert.True(t, documented[file], "%s calls context.WithValue but docs/architecture.md's table of context values does not list it: pass the service explicitly (a run option, a hook, a field) or document why it must cross a signature planner does not own", file)
		assert.Equal(t, 1, n, "%s calls context.WithValue %d times; keep one value per package", file, n)
	}
	for file := range documented {
		assert.Contains(t, found, file, "docs/architecture.md lists %s among the context values, but it holds no context.WithValue", file)
	}
	assert.LessOrEqual(t, total, maxContextValues, "context.WithValue sites: %v", found)
}
