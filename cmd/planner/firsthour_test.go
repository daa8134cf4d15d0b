package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests in this file pin what a new user meets in the first hour:
// every problem of an invalid pipeline, --version, counts that agree with
// their nouns, clean tool descriptions, usage hints that name a real
// command, and documentation that lists every shipped config.

func TestValidateListsEveryProblem(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`name: bad
nodes:
  - id: first
    type: direct
  - id: second
    type: direct
  - id: island
    type: direct
edges:
  - {from: START, to: first}
  - from: first
    to: {"": second, bogus: island}
  - {from: second, to: ghost}
  - {from: nowhere, to: END}
`), 0o600))
	res := cli(t, "validate", path)
	assert.Equal(t, 1, res.code)
	assert.Empty(t, res.stdout)
	assert.NotContains(t, res.stderr, "more problem")
	// One file:line: message line per problem, each at the line to change.
	want := []string{
		`:12: node "first" (direct) never returns route "bogus"`,
		`:13: edge from "second" goes to unknown node "ghost"`,
		`:14: edge from unknown node "nowhere"`,
		`:3: node "first": no path from node to END`,
		`:5: node "second": no path from node to END`,
		`:7: node "island": node unreachable from START`,
	}
	lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
	require.Len(t, lines, len(want), res.stderr)
	for i, w := range want {
		assert.True(t, strings.HasPrefix(lines[i], path+w), "line %d: %q, want %q", i+1, lines[i], path+w)
	}
}

func TestVersionFlagPrintsWhatTheVersionCommandPrints(t *testing.T) {
	t.Parallel()
	cmd := cli(t, "version")
	require.Equal(t, 0, cmd.code, "stderr: %s", cmd.stderr)
	assert.Equal(t, "planner "+version+"\n", cmd.stdout)
	flag := cli(t, "--version")
	require.Equal(t, 0, flag.code, "stderr: %s", flag.stderr)
	assert.Equal(t, cmd.stdout, flag.stdout)
	assert.Empty(t, flag.stderr)
}

func TestCountsAgreeWithTheirNouns(t *testing.T) {
	t.Parallel()
	res := cli(t, "validate", configPath("cot.yaml"), configPath("rewoo.yaml"))
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	assert.Contains(t, res.stdout, configPath("cot.yaml")+": ok (1 node)\n")
	assert.Contains(t, res.stdout, configPath("rewoo.yaml")+": ok (3 nodes)\n")

	res = cli(t, "tools", "call", "calculator")
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, "got 1 argument\n")
	res = cli(t, "tools", "x", "y")
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, "got 2 arguments\n")
	for _, r := range []result{cli(t, "validate", configPath("cot.yaml")), cli(t, "paradigms")} {
		assert.NotRegexp(t, `\b1 [a-z]+s\b|\(s\)`, r.stdout+r.stderr)
	}
}

func TestUsageHintsNameTheCommandThatWasRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		hint string
	}{
		{args: []string{"--bogus"}, hint: "Run 'planner --help' for usage."},
		{args: []string{"rnu"}, hint: "Run 'planner --help' for usage."},
		{args: []string{"validate"}, hint: "Run 'planner validate --help' for usage."},
		{args: []string{"tools", "call", "calculator"}, hint: "Run 'planner tools call --help' for usage."},
		{args: []string{"tools", "call", "--bogus"}, hint: "Run 'planner tools call --help' for usage."},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			res := cli(t, tt.args...)
			assert.Equal(t, exitUsage, res.code, "stderr: %s", res.stderr)
			assert.True(t, strings.HasSuffix(res.stderr, tt.hint+"\n"), "stderr: %q", res.stderr)
		})
	}
}

func TestToolsListsCleanDescriptions(t *testing.T) {
	t.Parallel()
	res := cli(t, "tools")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	// Each tool is a "name  [flags]" line, one description line and one
	// schema line, then a blank line.
	blocks := strings.Split(strings.TrimSpace(res.stdout), "\n\n")
	var names []string
	for _, b := range blocks {
		lines := strings.Split(b, "\n")
		require.Len(t, lines, 3, "tool block:\n%s", b)
		names = append(names, strings.Fields(lines[0])[0])
		desc, ok := strings.CutPrefix(lines[1], "  ")
		require.True(t, ok, lines[1])
		assert.NotEmpty(t, desc, lines[0])
		assert.NotRegexp(t, `^\s|\s$|\t|\s\s|^"|"$`, desc, lines[0])
		assert.True(t, strings.HasPrefix(lines[2], "  input schema: "), lines[2])
	}
	assert.Contains(t, names, "web_search")
	assert.Contains(t, names, "wikipedia")
	assert.Contains(t, res.stdout, "\n  A wrapper around DuckDuckGo Search. Free search alternative to google and serpapi. Input should be a search query.\n")
}

// TestTheReadmeListsEveryShippedConfig keeps the documentation's list of
// configs ("Paradigm configs in `configs/`: ...", in README.md or a page
// of docs/) equal to configs/*.yaml.
func TestTheReadmeListsEveryShippedConfig(t *testing.T) {
	t.Parallel()
	list := regexp.MustCompile("(?s)Paradigm configs in `configs/`:(.*?)\n\n")
	var m []string
	for _, page := range docPages(t) {
		if found := list.FindStringSubmatch(page.text); found != nil {
			require.Nil(t, m, "%s has a second \"Paradigm configs in `configs/`:\" paragraph", page.path)
			m = found
		}
	}
	require.NotNil(t, m, "neither README.md nor a page of docs/ has a \"Paradigm configs in `configs/`:\" paragraph")
	var listed []string
	for _, name := range regexp.MustCompile("`([a-z0-9_]+)`").FindAllStringSubmatch(m[1], -1) {
		listed = append(listed, name[1])
	}
	var shipped []string
	for _, path := range shippedConfigs(t) {
		shipped = append(shipped, strings.TrimSuffix(filepath.Base(path), ".yaml"))
	}
	slices.Sort(listed)
	assert.Equal(t, shipped, slices.Compact(listed), "the documented config list:\n%s", m[1])
}

// docsSection returns the text of the documentation from the heading
// title ("## Suite files") to the next heading of its level or above,
// wherever it is: in README.md or in one page of docs/.
func docsSection(t *testing.T, title string) string {
	t.Helper()
	level := strings.Fields(title)[0] // "##" or "###"
	var section, where string
	for _, page := range docPages(t) {
		text := "\n" + page.text
		start := strings.Index(text, "\n"+title+"\n")
		if start < 0 {
			continue
		}
		require.Empty(t, where, "%q is both in %s and in %s", title, where, page.path)
		where = page.path
		var b strings.Builder
		inBlock := false
		for _, line := range strings.Split(text[start+len(title)+2:], "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inBlock = !inBlock
			}
			if heading, _, ok := strings.Cut(line, " "); ok && !inBlock && heading != "" &&
				strings.Trim(heading, "#") == "" && len(heading) <= len(level) {
				break // a heading of the section's level or above
			}
			b.WriteString(line + "\n")
		}
		section = b.String()
	}
	require.NotEmpty(t, where, "neither README.md nor a page of docs/ has the heading %q", title)
	return section
}

// fenced returns the fenced code blocks of lang in text.
func fenced(text, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestTheReadmeExamplesRun runs the scripted-model examples and the
// example suite of the documentation (README.md and docs/), so it stays
// true.
func TestTheReadmeExamplesRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	scripts := fenced(docsSection(t, "## Writing a scripted model"), "yaml")
	require.Len(t, scripts, 2)
	for i, config := range []string{"react.yaml", "cot_sc.yaml"} {
		script := filepath.Join(dir, config+".script.yaml")
		require.NoError(t, os.WriteFile(script, []byte(scripts[i]), 0o600))
		res := cli(t, "run", "--json", "--config", configPath(config), "--llm", "scripted:"+script, "How many legs do 3 spiders have?")
		require.Equal(t, 0, res.code, "%s: stderr: %s", config, res.stderr)
		var out struct {
			Answer string `json:"answer"`
		}
		res.lastJSON(t, &out)
		assert.Equal(t, "24", out.Answer, config)
	}

	suites := fenced(docsSection(t, "## Suite files"), "json")
	require.Len(t, suites, 1)
	suite := filepath.Join(dir, "suite.jsonl")
	require.NoError(t, os.WriteFile(suite, []byte(suites[0]), 0o600))
	out := filepath.Join(dir, "out")
	res := cli(t, "compare", "--quiet", "--suite", suite, "--llm", "sim:perfect", "--out", out,
		"--config", configPath("react.yaml"), "--config", configPath("rewoo.yaml"))
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	raw, err := os.ReadFile(filepath.Join(out, "report.json"))
	require.NoError(t, err)
	var report struct {
		Tasks   int `json:"tasks"`
		Configs []struct {
			Name    string  `json:"config"`
			Success float64 `json:"success_rate"`
		} `json:"configs"`
	}
	require.NoError(t, json.Unmarshal(raw, &report), string(raw))
	assert.Equal(t, 2, report.Tasks)
	require.Len(t, report.Configs, 2, res.stdout)
	for _, c := range report.Configs {
		assert.InDelta(t, 1.0, c.Success, 1e-9, "%s solves every task of the documented suite with the perfect sim", c.Name)
	}
}

// readmeMaxLines is the most lines README.md may have: it keeps what a
// newcomer needs in the first ten minutes, and docs/ holds the rest.
const readmeMaxLines = 250

// TestTheReadmeIsShortAndStartsWithTheFirstCommands keeps README.md short
// and its first commands the offline main job (make run) and the tests
// (make test), which work on a fresh clone.
func TestTheReadmeIsShortAndStartsWithTheFirstCommands(t *testing.T) {
	t.Parallel()
	readme := docPages(t)[0]
	require.Equal(t, "README.md", readme.path)
	lines := strings.Count(readme.text, "\n")
	assert.LessOrEqual(t, lines, readmeMaxLines, "README.md has %d lines: move the details to a page of docs/", lines)
	blocks := fenced(readme.text, "sh")
	require.NotEmpty(t, blocks, "README.md shows its first commands in a sh block")
	var first []string
	for _, line := range strings.Split(strings.TrimSpace(blocks[0]), "\n") {
		first = append(first, strings.Join(strings.Fields(strings.SplitN(line, "#", 2)[0]), " "))
	}
	assert.Equal(t, []string{"make run", "make test"}, first[:min(2, len(first))], "README.md's first commands")
}
