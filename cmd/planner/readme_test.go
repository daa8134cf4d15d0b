package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/planner-engine/planner/config"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/trace"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The examples a user copies first must work as written on a fresh clone.
// TestDocumentedCommandsWork finds every planner command in the shell code
// blocks of README.md and of every page of docs/, in the Example of every
// command of the tree and in the comments of the scripts of
// examples/scripts, and runs each in-process. Nothing is listed by hand:
// an example added to the README, to a docs page, to a command or to a
// script is run by the next test run.
//
// How an example is run:
//   - Lines are commands when a pipeline stage starts with planner or
//     bin/planner (after NAME=value assignments, which set the command's
//     environment); `printf '...' |` and `echo ... |` before it become its
//     standard input; stages after it (| dot -Tsvg) are not run. make and
//     everything else is skipped.
//   - The commands of one code block (one command's Example, one script)
//     run in order in one scratch folder, so a cassette recorded by one
//     command is replayed by the next; the blocks run in parallel.
//   - Paths are those of the repository root: a path that exists there is
//     taken from it (globs are expanded there), ../shared data too (the
//     command is skipped when it is absent); the files a command writes
//     (--trace, --record, --out, > FILE, compare's default --out) go to the
//     scratch folder. A flag whose default is a path of the repository
//     (paradigms --dir configs) gets that path.
//   - The openai provider talks to a loopback fake OpenAI server (the
//     test sets OPENAI_BASE_URL and OPENAI_API_KEY), so the commands that
//     name openai, marked `# needs OPENAI_API_KEY` for readers, run
//     offline; a command marked as needing anything else (`# needs
//     network`) is skipped.
//   - It must exit 0, or the code a `# exits N` comment names (3 for a
//     run that waits for a person), and print something; run must print a complete,
//     non-empty answer, and the answer of the demo task when the sim model
//     plays one.

// example is one documented command.
type example struct {
	// where locates it: "README.md:31", "docs/cli.md:31" or "planner run
	// --help".
	where string
	// text is the command as documented, continuation lines joined.
	text string
	// args are planner's arguments (without the program name).
	args []shellWord
	// env holds the NAME=value assignments before the command.
	env []string
	// stdin is the text piped in by printf or echo; stdinFile a `< FILE`.
	stdin, stdinFile string
	// stdoutFile is a `> FILE`, "" when stdout is not redirected.
	stdoutFile string
	// needs is what the `# needs X` comment names, "" when none.
	needs string
	// exit is the exit code a `# exits N` comment names (a run that
	// waits for a person exits 3), 0 when none.
	exit int
}

// exampleGroup is examples that run in order in one scratch folder.
type exampleGroup struct {
	name     string
	examples []example
}

// shellWord is one word of a command line; quoted words are not globbed.
type shellWord struct {
	text   string
	quoted bool
}

// shellToken is a word or an operator (|, <, >) of a command line.
type shellToken struct {
	word shellWord
	op   string
}

// errShell is returned for command lines the harness cannot read.
var errShell = errors.New("unsupported shell syntax")

// splitShell splits a command line as a POSIX shell would, for the small
// part of the syntax examples use: single and double quotes, backslash
// escapes, the operators |, < and >, and a # comment, returned apart.
func splitShell(line string) (tokens []shellToken, comment string, err error) {
	var cur strings.Builder
	inWord, quoted := false, false
	flush := func() {
		if inWord {
			tokens = append(tokens, shellToken{word: shellWord{text: cur.String(), quoted: quoted}})
		}
		cur.Reset()
		inWord, quoted = false, false
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\'':
			end := strings.IndexRune(string(rs[i+1:]), '\'')
			if end < 0 {
				return nil, "", fmt.Errorf("%w: unterminated ' in %q", errShell, line)
			}
			seg := []rune(string(rs[i+1:])[:end])
			cur.WriteString(string(seg))
			i += len(seg) + 1
			inWord, quoted = true, true
		case r == '"':
			inWord, quoted = true, true
			i++
			for ; i < len(rs) && rs[i] != '"'; i++ {
				if rs[i] == '\\' && i+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[i+1]) {
					i++
				}
				cur.WriteRune(rs[i])
			}
			if i >= len(rs) {
				return nil, "", fmt.Errorf("%w: unterminated \" in %q", errShell, line)
			}
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			inWord = true
		case r == ' ' || r == '\t':
			flush()
		case r == '#' && !inWord:
			return tokens, strings.TrimSpace(string(rs[i+1:])), nil
		case r == '|' || r == '<' || r == '>':
			flush()
			tokens = append(tokens, shellToken{op: string(r)})
		case r == '$' || r == '`' || r == ';' || r == '&' || r == '(' || r == ')':
			return nil, "", fmt.Errorf("%w: %q in %q", errShell, r, line)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return tokens, "", nil
}

// isPlanner reports whether word names the planner program.
func isPlanner(word string) bool { return word == "planner" || word == "bin/planner" }

// plannerStage matches a line with a stage that runs planner: at the
// start of the line or after a |, after any NAME=value assignments.
var plannerStage = regexp.MustCompile(`(^|\|)\s*([A-Z_][A-Z0-9_]*=\S*\s+)*(bin/)?planner(\s|$)`)

// assignment matches a NAME=value word before a command.
var assignment = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// parseExample reads one command line; ok is false when no stage of it
// runs planner.
func parseExample(where, line string) (ex example, ok bool, err error) {
	if !plannerStage.MatchString(line) {
		return example{}, false, nil // output, code, make: not a planner command
	}
	tokens, comment, err := splitShell(line)
	if err != nil {
		return example{}, false, err
	}
	var stages [][]shellToken
	stage := []shellToken{}
	for _, tok := range tokens {
		if tok.op == "|" {
			stages = append(stages, stage)
			stage = []shellToken{}
			continue
		}
		stage = append(stage, tok)
	}
	stages = append(stages, stage)
	at := -1
	for i, st := range stages {
		j := 0
		for j < len(st) && st[j].op == "" && assignment.MatchString(st[j].word.text) {
			j++
		}
		if j < len(st) && st[j].op == "" && isPlanner(st[j].word.text) {
			at = i
			break
		}
	}
	if at < 0 {
		return example{}, false, nil
	}
	ex = example{where: where, text: line}
	if m := regexp.MustCompile(`\bexits (\d+)`).FindStringSubmatch(comment); m != nil {
		ex.exit, _ = strconv.Atoi(m[1])
	}
	if m := regexp.MustCompile(`\bneeds (\S+)`).FindStringSubmatch(comment); m != nil {
		ex.needs = m[1]
	}
	if at > 0 {
		if at > 1 {
			return example{}, false, fmt.Errorf("%w: more than one stage before planner in %q", errShell, line)
		}
		if ex.stdin, err = producedText(stages[0]); err != nil {
			return example{}, false, fmt.Errorf("%w in %q", err, line)
		}
	}
	st := stages[at]
	for i := 0; i < len(st); i++ {
		tok := st[i]
		switch {
		case tok.op == "<" || tok.op == ">":
			if i+1 >= len(st) || st[i+1].op != "" {
				return example{}, false, fmt.Errorf("%w: %s without a file in %q", errShell, tok.op, line)
			}
			if tok.op == "<" {
				ex.stdinFile = st[i+1].word.text
			} else {
				ex.stdoutFile = st[i+1].word.text
			}
			i++
		case len(ex.args) == 0 && assignment.MatchString(tok.word.text) && !isPlanner(tok.word.text):
			ex.env = append(ex.env, tok.word.text)
		case len(ex.args) == 0 && isPlanner(tok.word.text):
			ex.args = []shellWord{} // the program; its arguments follow
		default:
			ex.args = append(ex.args, tok.word)
		}
	}
	return ex, true, nil
}

// producedText is what a printf or echo stage writes.
func producedText(stage []shellToken) (string, error) {
	if len(stage) == 0 || stage[0].op != "" {
		return "", fmt.Errorf("%w: empty stage", errShell)
	}
	var words []string
	for _, tok := range stage[1:] {
		if tok.op != "" {
			return "", fmt.Errorf("%w: %s before planner", errShell, tok.op)
		}
		words = append(words, tok.word.text)
	}
	switch stage[0].word.text {
	case "echo":
		return strings.Join(words, " ") + "\n", nil
	case "printf":
		if len(words) != 1 {
			return "", fmt.Errorf("%w: printf with %d arguments", errShell, len(words))
		}
		return strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`).Replace(words[0]), nil
	}
	return "", fmt.Errorf("%w: %s before planner (only printf and echo are run)", errShell, stage[0].word.text)
}

// docPage is one page of the documentation: README.md or a page of docs/.
type docPage struct {
	// path is the page's path from the repository root, with slashes:
	// "README.md", "docs/cli.md".
	path string
	text string
}

// docPages returns README.md and every page of docs/, in that order (the
// pages of docs/ sorted by name).
func docPages(t *testing.T) []docPage {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, paths, "docs/ holds the documentation's pages")
	slices.Sort(paths)
	pages := make([]docPage, 0, len(paths)+1)
	for _, path := range append([]string{filepath.Join(repoRoot, "README.md")}, paths...) {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		rel, err := filepath.Rel(repoRoot, path)
		require.NoError(t, err)
		pages = append(pages, docPage{path: filepath.ToSlash(rel), text: string(b)})
	}
	return pages
}

// docGroups returns the commands of each shell code block of README.md
// and of every page of docs/, each group named by its page and line
// ("docs/cli.md:31").
func docGroups(t *testing.T) []exampleGroup {
	t.Helper()
	var groups []exampleGroup
	for _, page := range docPages(t) {
		groups = append(groups, pageGroups(t, page)...)
	}
	return groups
}

// pageGroups returns the commands of each shell code block of one page.
func pageGroups(t *testing.T, page docPage) []exampleGroup {
	t.Helper()
	lines := strings.Split(page.text, "\n")
	var groups []exampleGroup
	var cur *exampleGroup
	inBlock := false
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if strings.HasPrefix(trimmed, "```") {
			if !inBlock {
				inBlock = true
				// Shell blocks only: yaml and go blocks hold no commands.
				if lang := strings.TrimPrefix(trimmed, "```"); slices.Contains([]string{"", "sh", "bash", "shell", "console"}, lang) {
					cur = &exampleGroup{name: fmt.Sprintf("%s:%d", page.path, i+1)}
				}
			} else {
				if cur != nil && len(cur.examples) > 0 {
					groups = append(groups, *cur)
				}
				inBlock, cur = false, nil
			}
			continue
		}
		if cur == nil {
			continue
		}
		start := i
		line := trimmed
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		where := fmt.Sprintf("%s:%d", page.path, start+1)
		ex, ok, err := parseExample(where, line)
		require.NoError(t, err, where)
		if ok {
			cur.examples = append(cur.examples, ex)
		}
	}
	require.False(t, inBlock, "%s: a code block is not closed", page.path)
	return groups
}

// scriptGroups returns the commands in the comments of each script of
// examples/scripts, which say how to run it; every script must have one.
func scriptGroups(t *testing.T) []exampleGroup {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoRoot, "examples", "scripts", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	var groups []exampleGroup
	for _, path := range paths {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		rel, err := filepath.Rel(repoRoot, path)
		require.NoError(t, err)
		g := exampleGroup{name: rel}
		lines := strings.Split(string(b), "\n")
		comment := func(i int) (string, bool) {
			text, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "#")
			return strings.TrimSpace(text), ok
		}
		for i := 0; i < len(lines); i++ {
			line, ok := comment(i)
			if !ok || !strings.HasPrefix(line, "planner ") {
				continue
			}
			start := i
			for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
				i++
				next, ok := comment(i)
				require.True(t, ok, "%s:%d: the command goes on outside the comment", rel, i+1)
				line = strings.TrimSuffix(line, `\`) + " " + next
			}
			ex, ok, err := parseExample(fmt.Sprintf("%s:%d", rel, start+1), line)
			require.NoError(t, err, "%s:%d", rel, start+1)
			require.True(t, ok)
			g.examples = append(g.examples, ex)
		}
		require.NotEmpty(t, g.examples, "%s: say in a comment how to run the script (#   planner run --config ... --llm scripted:%s ...)", rel, rel)
		groups = append(groups, g)
	}
	return groups
}

// helpGroups returns the commands of the Example of every command of the
// tree.
func helpGroups(t *testing.T) []exampleGroup {
	t.Helper()
	var groups []exampleGroup
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		name := c.CommandPath() + " --help"
		g := exampleGroup{name: name}
		for _, line := range strings.Split(c.Example, "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			ex, ok, err := parseExample(name, line)
			require.NoError(t, err, name)
			require.True(t, ok, "%s: the example %q runs no planner command", name, line)
			g.examples = append(g.examples, ex)
		}
		if len(g.examples) > 0 {
			groups = append(groups, g)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(process{lookupEnv: func(string) (string, bool) { return "", false }}))
	return groups
}

// outputFlags are the flags whose value is a file or folder the command
// writes.
var outputFlags = map[string]bool{"trace": true, "record": true, "out": true, "store": true}

// fileExt matches a word that looks like a file name by its extension.
var fileExt = regexp.MustCompile(`\.(ya?ml|jsonl?|csv|md|txt|html|svg|db|dot)$`)

// preparedRun is an example made ready to run in a scratch folder.
type preparedRun struct {
	args []string
	// skip, when not "", is why the example cannot run here.
	skip string
	// cmd is the planner command the arguments select.
	cmd *cobra.Command
}

// prepare resolves ex's paths against the repository and scratch, and
// gives compare's default output folder a place in scratch.
func prepare(t *testing.T, ex example, scratch string) preparedRun {
	t.Helper()
	var out preparedRun
	path := func(v string, output bool) string {
		switch {
		case v == "" || v == "-" || filepath.IsAbs(v):
			return v
		case strings.HasPrefix(v, "../"):
			p := filepath.Join(repoRoot, v)
			if _, err := os.Stat(p); err != nil && out.skip == "" {
				out.skip = fmt.Sprintf("%s is absent", v)
			}
			return p
		}
		if _, err := os.Stat(filepath.Join(repoRoot, v)); err == nil && !output {
			return filepath.Join(repoRoot, v)
		}
		if _, err := os.Stat(filepath.Join(scratch, v)); err == nil || output || fileExt.MatchString(v) {
			return filepath.Join(scratch, v)
		}
		return v
	}
	words := make([]string, len(ex.args))
	for i, w := range ex.args {
		words[i] = w.text
	}
	root := newRoot(process{lookupEnv: func(string) (string, bool) { return "", false }})
	cmd, _, err := root.Find(words)
	require.NoError(t, err, "%s: %s", ex.where, ex.text)
	out.cmd = cmd
	lookup := func(name string) *pflag.Flag {
		if f := cmd.Flags().Lookup(name); f != nil {
			return f
		}
		return cmd.InheritedFlags().Lookup(name)
	}
	value := func(f *pflag.Flag, v string) string {
		if f.Name == "llm" {
			if prov, file, ok := strings.Cut(v, ":"); ok && (prov == "scripted" || prov == "replay") {
				return prov + ":" + path(file, false)
			}
			if config.IsModelsFile(v) {
				return path(v, false)
			}
			return v
		}
		if f.Name == "score" || f.Name == "scorer" {
			if kind, file, ok := strings.Cut(v, ":"); ok && (kind == "code" || kind == "judge") {
				return kind + ":" + path(file, false)
			}
			return v
		}
		if f.Value.Type() != "string" && f.Value.Type() != "stringArray" {
			return v
		}
		return path(v, outputFlags[f.Name])
	}
	given := map[string]bool{}
	names := len(strings.Fields(cmd.CommandPath())) - 1 // the command's own words, as given
	for i := 0; i < len(words); i++ {
		w := ex.args[i]
		switch {
		case i < names:
			out.args = append(out.args, w.text)
		case strings.HasPrefix(w.text, "-") && w.text != "-":
			name, v, hasValue := strings.Cut(strings.TrimLeft(w.text, "-"), "=")
			f := lookup(name)
			if f == nil && !strings.HasPrefix(w.text, "--") {
				f = cmd.Flags().ShorthandLookup(name)
			}
			if f == nil {
				out.args = append(out.args, w.text) // the command reports it
				continue
			}
			given[f.Name] = true
			switch {
			case hasValue:
				out.args = append(out.args, w.text[:len(w.text)-len(v)]+value(f, v))
			case f.Value.Type() == "bool" || i+1 >= len(words):
				out.args = append(out.args, w.text)
			default:
				i++
				out.args = append(out.args, w.text, value(f, words[i]))
			}
		case !w.quoted && strings.ContainsAny(w.text, "*?["):
			matches, err := filepath.Glob(filepath.Join(repoRoot, w.text))
			require.NoError(t, err)
			if len(matches) == 0 {
				matches = []string{w.text}
			}
			out.args = append(out.args, matches...)
		default:
			if _, err := os.Stat(filepath.Join(repoRoot, w.text)); err == nil && !filepath.IsAbs(w.text) && w.text != "" {
				out.args = append(out.args, filepath.Join(repoRoot, w.text))
			} else {
				out.args = append(out.args, w.text)
			}
		}
	}
	// A default relative path means the working directory, the
	// repository root for a user of the examples.
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name == "store" && !given[f.Name] {
			// The thread store defaults to the user's state folder: keep
			// the examples' threads in scratch, shared by the group.
			out.args = append(out.args, "--store", filepath.Join(scratch, "threads.db"))
			return
		}
		if given[f.Name] || f.Value.Type() != "string" || f.DefValue == "" || filepath.IsAbs(f.DefValue) {
			return
		}
		if outputFlags[f.Name] {
			out.args = append(out.args, "--"+f.Name, filepath.Join(scratch, f.DefValue))
		} else if _, err := os.Stat(filepath.Join(repoRoot, f.DefValue)); err == nil {
			out.args = append(out.args, "--"+f.Name, filepath.Join(repoRoot, f.DefValue))
		}
	})
	return out
}

// fakeReply is what the fake OpenAI server answers every documented
// command: a final answer in the ReAct format when the prompt asks for
// it, else a chain of thought.
func fakeReply(_ int, req chatRequest) reply {
	if strings.Contains(req.text(), "Action Input") {
		return reply{content: "Thought: I can answer this from what I know.\nFinal Answer: 395", promptTokens: 120, completion: 14}
	}
	return reply{content: "17 * 23 = 391, and 391 + 4 = 395.\nAnswer: 395", promptTokens: 40, completion: 16}
}

func TestDocumentedCommandsWork(t *testing.T) {
	// Not parallel: the openai provider reads its endpoint and key from the
	// process environment, set here for every example; the examples
	// themselves run in parallel.
	srv := newFakeOpenAI(t, fakeReply)
	useOpenAI(t, srv.baseURL(), "sk-test-readme-0123456789abcdef")

	groups := slices.Concat(docGroups(t), helpGroups(t), scriptGroups(t))
	var readme, docs, help int
	for _, g := range groups {
		switch {
		case strings.HasPrefix(g.name, "README.md:"):
			readme += len(g.examples)
		case strings.HasPrefix(g.name, "docs/"):
			docs += len(g.examples)
		default:
			help += len(g.examples)
		}
	}
	require.Positive(t, readme, "README.md shows planner commands")
	require.Positive(t, docs, "the pages of docs/ show planner commands")
	require.Positive(t, help, "the commands have examples")
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			scratch := t.TempDir()
			for _, ex := range g.examples {
				runExample(t, ex, scratch)
			}
		})
	}
}

// runExample runs one documented command in scratch and checks its
// result.
func runExample(t *testing.T, ex example, scratch string) {
	t.Helper()
	label := fmt.Sprintf("%s: %s", ex.where, ex.text)
	if ex.needs != "" && ex.needs != "OPENAI_API_KEY" {
		t.Logf("skipped (needs %s): %s", ex.needs, label)
		return
	}
	run := prepare(t, ex, scratch)
	if run.skip != "" {
		t.Logf("skipped (%s): %s", run.skip, label)
		return
	}
	in := invocation{args: run.args, env: ex.env, stdin: ex.stdin}
	if ex.stdinFile != "" {
		p := filepath.Join(repoRoot, ex.stdinFile)
		if _, err := os.Stat(p); err != nil {
			p = filepath.Join(scratch, ex.stdinFile)
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err, "%s: the file it reads", label)
		in.stdin = string(b)
	}
	res := execPlanner(t, in)
	require.Equal(t, ex.exit, res.code, "%s\nexit code %d\nstdout:\n%s\nstderr:\n%s", label, res.code, res.stdout, res.stderr)
	require.NotEmpty(t, strings.TrimSpace(res.stdout), "%s prints nothing", label)
	if ex.exit != 0 {
		return
	}
	if ex.stdoutFile != "" {
		require.NoError(t, os.WriteFile(filepath.Join(scratch, ex.stdoutFile), []byte(res.stdout), 0o600))
	}
	if run.cmd.Name() == "run" {
		checkRunAnswer(t, label, ex, res)
	}
}

// checkRunAnswer checks that a documented run printed a complete,
// non-empty answer, and the demo task's answer when the sim model played
// one.
func checkRunAnswer(t *testing.T, label string, ex example, res result) {
	t.Helper()
	root := newRoot(process{lookupEnv: func(string) (string, bool) { return "", false }})
	cmd, rest, err := root.Find(argTexts(ex.args))
	require.NoError(t, err, label)
	require.NoError(t, cmd.ParseFlags(rest), label)
	flag := func(name string) string { return cmd.Flags().Lookup(name).Value.String() }

	var answer string
	if flag("json") == "true" {
		var out runOutput
		res.lastJSON(t, &out)
		require.True(t, out.Complete, "%s: incomplete: %+v", label, out)
		answer = out.Answer
	} else {
		line, err := findLine(res.stdout, "Answer: ", "")
		require.NoError(t, err, "%s\nstdout:\n%s", label, res.stdout)
		answer = strings.TrimSpace(strings.TrimPrefix(line, "Answer: "))
	}
	require.NotEmpty(t, answer, label)

	q := app.TaskQuery{Suite: flag("suite"), ID: flag("task"), Question: strings.Join(cmd.Flags().Args(), " ")}
	if q.Question == "-" {
		q.Question = ex.stdin
	}
	spec, err := llm.ParseSpec(flag("llm"))
	if err != nil || spec.Provider != "sim" || (q.Suite != "" && q.Suite != app.DemoSuite) {
		return
	}
	task, found, err := app.FindTask(context.Background(), q)
	require.NoError(t, err, label)
	if found {
		assert.Equal(t, task.Answer, answer, "%s: the sim model plays task %s", label, task.ID)
	}
}

// argTexts returns the words' texts.
func argTexts(words []shellWord) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w.text
	}
	return out
}

func TestSplitShellReadsTheSyntaxOfTheExamples(t *testing.T) {
	t.Parallel()
	tokens, comment, err := splitShell(`printf 'a\nb "c"' | PLANNER_X=1 bin/planner parse --x "it's \"q\"" < in.txt > out.txt   # needs network`)
	require.NoError(t, err)
	assert.Equal(t, "needs network", comment)
	var got []string
	for _, tok := range tokens {
		if tok.op != "" {
			got = append(got, tok.op)
		} else {
			got = append(got, tok.word.text)
		}
	}
	assert.Equal(t, []string{"printf", `a\nb "c"`, "|", "PLANNER_X=1", "bin/planner", "parse", "--x", `it's "q"`, "<", "in.txt", ">", "out.txt"}, got)

	ex, ok, err := parseExample("here", `printf 'a\nb' | PLANNER_X=1 bin/planner parse --x "y z" < in.txt > out.txt   # needs network`)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "a\nb", ex.stdin)
	assert.Equal(t, []string{"PLANNER_X=1"}, ex.env)
	assert.Equal(t, []string{"parse", "--x", "y z"}, argTexts(ex.args))
	assert.Equal(t, "in.txt", ex.stdinFile)
	assert.Equal(t, "out.txt", ex.stdoutFile)
	assert.Equal(t, "network", ex.needs)

	for _, line := range []string{"make run    # builds bin/planner", `p.yaml:5: node "answer" (cot): setting "prompt": ...`, "eng, err := planner.New()"} {
		_, ok, err = parseExample("here", line)
		require.NoError(t, err, line)
		assert.False(t, ok, "not a planner command: %s", line)
	}
	_, _, err = parseExample("here", "planner run $(cat task.txt)")
	require.ErrorIs(t, err, errShell, "what the harness cannot run is an error, not a silent skip")
}

// jsonShapeKeys returns the keys a documented shape such as
// {"answer","usage":{"model_calls"},"steps"} lists: the top-level ones and
// those of each nested object, by parent key.
func jsonShapeKeys(shape string) (top []string, nested map[string][]string) {
	nested = map[string][]string{}
	var parents []string
	for i := 0; i < len(shape); i++ {
		switch shape[i] {
		case '{':
			parents = append(parents, "")
		case '}':
			parents = parents[:len(parents)-1]
		case '"':
			end := strings.IndexByte(shape[i+1:], '"')
			key := shape[i+1 : i+1+end]
			i += end + 1
			if len(parents) == 1 {
				top = append(top, key)
			} else if len(parents) > 1 {
				nested[parents[len(parents)-1]] = append(nested[parents[len(parents)-1]], key)
			}
			if i+2 < len(shape) && shape[i+1] == ':' && shape[i+2] == '{' {
				parents = append(parents, key)
				i += 2
			}
		}
	}
	return top, nested
}

func TestTheReadmeShowsTheJSONThatRunPrints(t *testing.T) {
	t.Parallel()
	shape := regexp.MustCompile("`run --json` prints[^`]*`(\\{[^`]*\\})`")
	var m []string
	for _, page := range docPages(t) {
		if found := shape.FindStringSubmatch(page.text); found != nil {
			require.Nil(t, m, "%s shows the shape of run --json a second time", page.path)
			m = found
		}
	}
	require.NotNil(t, m, "README.md or a page of docs/ shows the shape of run --json")
	top, nested := jsonShapeKeys(m[1])

	res := cli(t, "run", "--config", configPath("cot.yaml"), "--llm", "scripted:"+filepath.Join(repoRoot, "examples", "scripts", "cot_demo.yaml"),
		"--json", "A farmer has 3 fields of 17 rows with 23 plants each. How many plants?")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	var out map[string]any
	res.lastJSON(t, &out)
	var keys []string
	for k := range out {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, top, keys, "the keys of a complete run without --trace or --record, as the docs list them")
	for parent, want := range nested {
		obj, ok := out[parent].(map[string]any)
		require.True(t, ok, "%q is an object", parent)
		for _, k := range want {
			assert.Contains(t, obj, k, "%s.%s", parent, k)
		}
	}
}

// docBlock is one fenced code block of a page of the documentation.
type docBlock struct {
	// where locates its opening fence: "docs/go-api.md:31".
	where string
	// lang is the fence's language: go, yaml, sh, "" ...
	lang string
	// text is the block's lines, each ending in a newline.
	text string
	// source is the file the line above the block names
	// (<!-- code: PATH -->), "" when none.
	source string
}

// codeMarker is the line above a code block that names the compiled or
// shipped file the block is a verbatim part of.
var codeMarker = regexp.MustCompile(`^<!-- code: (\S+) -->$`)

// docBlocks returns the fenced code blocks of a page.
func docBlocks(page docPage) []docBlock {
	lines := strings.Split(page.text, "\n")
	var out []docBlock
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		b := docBlock{where: fmt.Sprintf("%s:%d", page.path, i+1), lang: strings.TrimPrefix(trimmed, "```")}
		if i > 0 {
			if m := codeMarker.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				b.source = m[1]
			}
		}
		var body strings.Builder
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
			body.WriteString(lines[i] + "\n")
		}
		b.text = body.String()
		out = append(out, b)
	}
	return out
}

// containsIndented reports whether the lines of snippet are consecutive
// lines of text, each indented by the same run of tabs (so a function body
// may be shown without its indentation); blank lines match blank lines.
func containsIndented(text, snippet string) bool {
	want := strings.Split(strings.TrimRight(snippet, "\n"), "\n")
	have := strings.Split(text, "\n")
	for i := 0; i+len(want) <= len(have); i++ {
		indent, ok := strings.CutSuffix(have[i], want[0])
		if !ok || strings.Trim(indent, "\t") != "" {
			continue
		}
		match := true
		for j, w := range want {
			if w == "" {
				match = have[i+j] == ""
			} else {
				match = have[i+j] == indent+w
			}
			if !match {
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

func TestContainsIndentedFindsOnlyVerbatimCode(t *testing.T) {
	t.Parallel()
	src := "func f() {\n\tx := 1\n\n\tif x > 0 {\n\t\tx++\n\t}\n}\n"
	assert.True(t, containsIndented(src, "x := 1\n\nif x > 0 {\n\tx++\n}\n"), "a body shown without its indentation")
	assert.True(t, containsIndented(src, src), "the whole file")
	assert.False(t, containsIndented(src, "x := 2\n"), "a changed line")
	assert.False(t, containsIndented(src, "x := 1\nif x > 0 {\n"), "a line left out")
	assert.False(t, containsIndented(src, "x++\n}\n"), "lines indented unevenly in the file")
	assert.False(t, containsIndented("\tx := 1 // a\n", "x := 1\n"), "part of a line")
}

// TestTheDocsCodeIsCompiledCode keeps the code the docs show equal to code
// that is compiled and run, so it cannot rot: every Go block, and every
// other block whose line above says <!-- code: PATH -->, must be a
// verbatim part of PATH (a Go function body may be shown without its
// indentation).
func TestTheDocsCodeIsCompiledCode(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, page := range docPages(t) {
		for _, b := range docBlocks(page) {
			if b.lang == "go" && !assert.NotEmpty(t, b.source, "%s: a Go block names the compiled file it is part of on the line above: <!-- code: PATH -->", b.where) {
				continue
			}
			if b.source == "" {
				continue
			}
			src, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(b.source)))
			if !assert.NoError(t, err, "%s: the file the block comes from", b.where) {
				continue
			}
			assert.True(t, containsIndented(string(src), b.text), "%s: the block is not a verbatim part of %s any more: copy it from there again\n%s", b.where, b.source, b.text)
			checked++
		}
	}
	assert.Positive(t, checked, "the Go API page shows compiled code")
}

// streamTokens is the live run that docs/go-api.md shows (its body,
// verbatim): it starts the run with token events and writes the reply to
// w as the model writes it.
func streamTokens(ctx context.Context, p *planner.Pipeline, w io.Writer) (*planner.Result, error) {
	run := p.Start(ctx, "A farmer has 3 fields of 17 rows with 23 plants each. How many plants?", planner.WithTokens())
	for e := range run.Events() {
		if e.Kind == trace.KindToken {
			fmt.Fprint(w, e.Text) // the reply as the model writes it
		}
	}
	return run.Wait()
}

func TestTheGoAPIPageStreamsALiveRun(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	eng, err := planner.New()
	require.NoError(t, err)
	defer eng.Close()
	p, err := eng.Load(ctx, configPath("cot.yaml"), planner.WithLLM("scripted:"+filepath.Join(repoRoot, "examples", "scripts", "cot_demo.yaml")))
	require.NoError(t, err)
	defer p.Close()
	var reply strings.Builder
	res, err := streamTokens(ctx, p, &reply)
	require.NoError(t, err)
	assert.Equal(t, "1173", res.Answer)
	assert.Contains(t, reply.String(), "Answer: 1173", "the token events carry the reply")
}

// wholePipeline matches the top-level keys a whole pipeline has.
var wholePipeline = [...]*regexp.Regexp{regexp.MustCompile(`(?m)^nodes:`), regexp.MustCompile(`(?m)^edges:`)}

// TestTheDocsPipelinesValidate runs planner validate on every whole
// pipeline (a YAML block with nodes: and edges:) the docs show; a block
// that copies a shipped file (<!-- code: PATH -->) is checked against it
// instead.
func TestTheDocsPipelinesValidate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := 0
	for _, page := range docPages(t) {
		for _, b := range docBlocks(page) {
			if b.lang != "yaml" || b.source != "" || !wholePipeline[0].MatchString(b.text) || !wholePipeline[1].MatchString(b.text) {
				continue
			}
			n++
			file := filepath.Join(dir, fmt.Sprintf("pipeline-%d.yaml", n))
			require.NoError(t, os.WriteFile(file, []byte(b.text), 0o600))
			res := cli(t, "validate", file)
			assert.Equal(t, 0, res.code, "%s: planner validate:\n%s%s", b.where, res.stdout, res.stderr)
		}
	}
	assert.Positive(t, n, "the docs show whole pipelines")
}

// mdLink matches the target of a Markdown link: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingAnchor returns the anchor GitHub gives a heading: its text in
// lower case, without the characters that are neither letters, digits,
// spaces, hyphens nor underscores, spaces turned into hyphens.
func headingAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// pageAnchors returns the anchors of a page's headings.
func pageAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	inBlock := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		base := headingAnchor(title)
		anchor := base
		for i := 1; anchors[anchor]; i++ {
			anchor = fmt.Sprintf("%s-%d", base, i)
		}
		anchors[anchor] = true
	}
	return anchors
}

func TestHeadingAnchorIsGitHubs(t *testing.T) {
	t.Parallel()
	for heading, want := range map[string]string{
		"Embedding retrieval (`method: embedding` / `hybrid`)": "embedding-retrieval-method-embedding--hybrid",
		"`planner validate`, `graph`, `paradigms`":             "planner-validate-graph-paradigms",
		"The `llm:` block": "the-llm-block",
		"Finding tools that were not shown: the search tool (`find_tools`)": "finding-tools-that-were-not-shown-the-search-tool-find_tools",
	} {
		assert.Equal(t, want, headingAnchor(heading), heading)
	}
	assert.Equal(t, map[string]bool{"a": true, "a-1": true}, pageAnchors("# A\n```sh\n# not a heading\n```\n## A\n"))
}

// TestTheDocsLinksResolve checks every relative link of README.md and of
// the pages of docs/: the file exists, and so does the heading an anchor
// names. README.md links every page of docs/.
func TestTheDocsLinksResolve(t *testing.T) {
	t.Parallel()
	pages := docPages(t)
	anchors := map[string]map[string]bool{}
	for _, page := range pages {
		anchors[page.path] = pageAnchors(page.text)
	}
	links := 0
	for _, page := range pages {
		inBlock := false
		for i, line := range strings.Split(page.text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inBlock = !inBlock
			}
			if inBlock {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				where := fmt.Sprintf("%s:%d", page.path, i+1)
				file, anchor, _ := strings.Cut(target, "#")
				dest := page.path
				if file != "" {
					dest = path.Join(path.Dir(page.path), file)
				}
				if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(dest))); !assert.NoError(t, err, "%s: link to %s", where, target) {
					continue
				}
				if anchor == "" {
					continue
				}
				known, ok := anchors[dest]
				if assert.True(t, ok, "%s: link to %s: an anchor into a page that is not README.md or docs/*.md", where, target) {
					assert.True(t, known[anchor], "%s: link to %s: %s has no heading with the anchor #%s", where, target, dest, anchor)
				}
			}
		}
	}
	assert.Positive(t, links)
	for _, page := range pages[1:] {
		assert.Contains(t, pages[0].text, "]("+page.path+")", "README.md's list of where to read on links %s", page.path)
	}
}
