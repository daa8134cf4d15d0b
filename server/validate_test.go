package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/full"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/server"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validateYAML is a pipeline with extra tools entries and node settings,
// for the validation tests.
func validateYAML(toolsList, nodeSettings string) string {
	return "name: posted\ntools: [calculator" + toolsList + "]\nnodes:\n  - {id: act, type: react, mode: text" + nodeSettings + "}\n" +
		"edges:\n  - {from: START, to: act}\n  - {from: act, to: END}\n"
}

// validate posts yaml for validation with a deadline (a validation that
// blocks fails the test instead of hanging it) and returns the answer.
func (e *env) validate(yaml string) (response, server.ValidateResult) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	body, _ := json.Marshal(map[string]string{"yaml": yaml, "file": "mine.yaml"})
	req, err := http.NewRequestWithContext(ctx, "POST", e.ts.URL+"/api/pipelines/validate", bytes.NewReader(body))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	res, err := e.ts.Client().Do(req)
	require.NoError(e.t, err, "the validation answers in time")
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	r := response{code: res.StatusCode, header: res.Header, body: buf.Bytes()}
	var v server.ValidateResult
	if r.code == http.StatusOK {
		r.json(e.t, &v)
	}
	return r, v
}

// refusal returns the message of the only problem of a refused
// validation, with the path as the pipeline wrote it replaced by PATH.
func refusal(t *testing.T, r response, v server.ValidateResult, path string) string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	require.False(t, v.OK, "%s", r.body)
	require.Len(t, v.Errors, 1, "%s", r.body)
	return strings.ReplaceAll(v.Errors[0].Message, path, "PATH")
}

// outsideDir is a folder outside every test env's root, with a corpus
// file, a prompt file and a file that is no database.
func outsideDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"doc.md": "# Secret\nThe launch code is 0000.\n", "prompt.txt": "Answer {{.Question}}",
		"db.sqlite": "not a database"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	return dir
}

// Every path a posted pipeline names must lie under the root: one outside
// is refused with the same message whether or not it exists, and is never
// read (a posted pipeline read any file of the server, and told which
// existed).
func TestValidateConfinesPathsToTheRoot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out := outsideDir(t)
	for _, c := range []struct {
		name           string
		tools, node    string
		exists, nosuch string
	}{
		{name: "search corpus", tools: ", {name: search, corpus: %s}", exists: filepath.Join(out, "doc.md"), nosuch: filepath.Join(out, "nosuch.md")},
		{name: "search corpus folder", tools: ", {name: search, corpus: %s}", exists: out, nosuch: filepath.Join(out, "nosuch")},
		{name: "docstore source", tools: ", {name: docstore, source: %s}", exists: out, nosuch: filepath.Join(out, "nosuch")},
		{name: "files root", tools: ", {name: files, root: %s}", exists: out, nosuch: filepath.Join(out, "nosuch")},
		{name: "sql database", tools: ", {name: sql, path: %s}", exists: filepath.Join(out, "db.sqlite"), nosuch: filepath.Join(out, "nosuch.sqlite")},
		{name: "prompt file", node: ", prompt_file: %s", exists: filepath.Join(out, "prompt.txt"), nosuch: filepath.Join(out, "nosuch.txt")},
		{name: "system file", node: ", system_file: %s", exists: filepath.Join(out, "prompt.txt"), nosuch: filepath.Join(out, "nosuch.txt")},
		{name: "examples file", node: ", examples_file: %s", exists: filepath.Join(out, "prompt.txt"), nosuch: filepath.Join(out, "nosuch.txt")},
		{name: "relative path", tools: ", {name: search, corpus: %s}", exists: "../../" + filepath.Base(out), nosuch: "../../nosuch-outside"},
	} {
		t.Run(c.name, func(t *testing.T) {
			yaml := func(p string) string {
				return validateYAML(strings.ReplaceAll(c.tools, "%s", p), strings.ReplaceAll(c.node, "%s", p))
			}
			r, v := e.validate(yaml(c.exists))
			got := refusal(t, r, v, c.exists)
			assert.Contains(t, got, "is outside the folder this server reads")
			r, v = e.validate(yaml(c.nosuch))
			assert.Equal(t, got, refusal(t, r, v, c.nosuch), "the same message whether or not the path exists")
			assert.NotContains(t, string(r.body), "0000")
		})
	}
}

// A path under the root that is a link to outside it is refused, and so
// is a corpus folder holding such a link.
func TestValidateResolvesLinks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out := outsideDir(t)
	require.NoError(t, os.Symlink(filepath.Join(out, "doc.md"), filepath.Join(e.dir, "link.md")))
	require.NoError(t, os.Symlink(out, filepath.Join(e.dir, "linked")))
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "corpus"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "corpus", "mine.md"), []byte("# Mine\nMine.\n"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(out, "doc.md"), filepath.Join(e.dir, "corpus", "theirs.md")))
	require.NoError(t, os.Symlink(filepath.Join(out, "nosuch.md"), filepath.Join(e.dir, "dangling.md")))
	require.NoError(t, os.Symlink(filepath.Join(out, "nosuch"), filepath.Join(e.dir, "dangling")))
	for _, p := range []string{"../link.md", "../linked", "../linked/doc.md", "../dangling.md", "../dangling/doc.md"} {
		r, v := e.validate(validateYAML(", {name: search, corpus: "+p+"}", ""))
		assert.Contains(t, refusal(t, r, v, p), "is outside the folder this server reads", p)
		assert.NotContains(t, string(r.body), "0000")
	}
	r, v := e.validate(validateYAML(", {name: search, corpus: ../corpus}", ""))
	assert.Contains(t, refusal(t, r, v, "../corpus"), "theirs.md\" is a link to outside the folder this server reads")
	assert.NotContains(t, string(r.body), "0000")

	// Without the link, the corpus under the root validates; paths are
	// taken relative to the configs folder, as for a config there.
	require.NoError(t, os.Remove(filepath.Join(e.dir, "corpus", "theirs.md")))
	r, v = e.validate(validateYAML(", {name: search, corpus: ../corpus}", ""))
	require.Equal(t, http.StatusOK, r.code)
	assert.True(t, v.OK, "%s", r.body)
	r, v = e.validate(validateYAML(", {name: search, corpus: "+filepath.Join(e.dir, "corpus")+"}", ""))
	assert.True(t, v.OK, "an absolute path under the root: %s", r.body)
	// A missing file under the root is the tool's error, without the
	// root's own path.
	r, v = e.validate(validateYAML(", {name: search, corpus: ../nosuch}", ""))
	assert.False(t, v.OK)
	assert.NotContains(t, string(r.body), e.dir, "the root's path never shows")
}

// A FIFO (or any file that is not a regular file or a folder) is never
// opened: reading one blocked the validation, and a thread, forever.
func TestValidateNeverOpensAFIFO(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fifo := filepath.Join(e.dir, "fifo.txt")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "corpus"), 0o755))
	inCorpus := filepath.Join(e.dir, "corpus", "pipe.md")
	require.NoError(t, syscall.Mkfifo(inCorpus, 0o644))
	t.Cleanup(func() { // unblock a reader stuck on them, should one be
		for _, p := range []string{fifo, inCorpus} {
			if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				_ = f.Close()
			}
		}
	})
	r, v := e.validate(validateYAML("", ", prompt_file: ../fifo.txt"))
	assert.Contains(t, refusal(t, r, v, "../fifo.txt"), "is not a regular file or a folder")
	r, v = e.validate(validateYAML(", {name: search, corpus: ../fifo.txt}", ""))
	assert.Contains(t, refusal(t, r, v, "../fifo.txt"), "is not a regular file or a folder")
	r, v = e.validate(validateYAML(", {name: search, corpus: ../corpus}", ""))
	assert.Contains(t, refusal(t, r, v, "../corpus"), "pipe.md\" is not a regular file")
	r, v = e.validate(validateYAML(", {name: search, corpus: /dev/zero}", ""))
	assert.Contains(t, refusal(t, r, v, "/dev/zero"), "is outside the folder this server reads", "a device outside the root")
}

// ${VAR} in a posted pipeline reads only the variables of the server's
// allow-list (none by default): the server's environment never comes back
// (a DATABASE_URL with its password did).
func TestValidateExpandsOnlyAllowedVariables(t *testing.T) {
	const secret = "postgres://app:hunter2-not-a-key@db.internal/prod"
	t.Setenv("PLANNERTEST_DATABASE_URL", secret)
	t.Setenv("PLANNERTEST_PUBLIC_MODEL", "gpt-test")
	e := newEnv(t)
	yaml := strings.Replace(validateYAML("", ""), "name: posted", "name: \"${PLANNERTEST_DATABASE_URL}\"", 1)
	r, v := e.validate(yaml)
	require.Equal(t, http.StatusOK, r.code)
	assert.False(t, v.OK)
	assert.NotContains(t, string(r.body), "hunter2")
	require.Len(t, v.Errors, 1)
	assert.Contains(t, v.Errors[0].Message, "PLANNERTEST_DATABASE_URL is not one this pipeline may read")
	assert.Equal(t, 1, v.Errors[0].Line)

	r, v = e.validate(strings.Replace(validateYAML("", ""), "name: posted", "name: \"${PLANNERTEST_DATABASE_URL:-fallback}\"", 1))
	assert.True(t, v.OK, "%s", r.body)
	assert.Equal(t, "fallback", v.Name, "a variable off the list counts as unset")

	e = newEnv(t, func(c *server.Config) { c.AllowEnv = []string{"PLANNERTEST_PUBLIC_*"} })
	r, v = e.validate(strings.Replace(validateYAML("", ""), "name: posted", "name: \"${PLANNERTEST_PUBLIC_MODEL}\"", 1))
	assert.True(t, v.OK, "%s", r.body)
	assert.Equal(t, "gpt-test", v.Name, "the allow-list's variables expand")
	r, _ = e.validate(yaml)
	assert.NotContains(t, string(r.body), "hunter2")

	_, err := server.New(server.Config{Engine: sharedEngine, Store: e.srv.Store(), AllowEnv: []string{"BAD NAME"}})
	assert.ErrorIs(t, err, server.ErrConfig)
}

// slowTools builds the tool "slow", which waits until released (or its
// build is cancelled), and the built-in tools.
type slowTools struct {
	entered chan struct{}
	release chan struct{}
}

func (f slowTools) Tools(ctx context.Context, spec config.Tool, baseDir string) ([]tools.Tool, error) {
	if spec.Name != "slow" {
		return builtin.Factory{}.Tools(ctx, spec, baseDir)
	}
	f.entered <- struct{}{}
	select {
	case <-f.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return builtin.Factory{}.Tools(ctx, config.Tool{Name: "get_time"}, baseDir)
}

// slowEnv is a test env whose engine has the "slow" tool.
func slowEnv(t *testing.T, opts ...option) (*env, slowTools) {
	t.Helper()
	f := slowTools{entered: make(chan struct{}, 16), release: make(chan struct{})}
	eng, err := planner.New(append(full.Options(), planner.WithTools(f))...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = eng.Close() })
	return newEnv(t, append([]option{func(c *server.Config) { c.Engine = eng }}, opts...)...), f
}

// Validations are bounded in number: past MaxValidations at once, 429.
func TestValidationsAreBoundedInNumber(t *testing.T) {
	t.Parallel()
	e, f := slowEnv(t, func(c *server.Config) { c.MaxValidations, c.ValidateTimeout = 1, time.Minute })
	var wg sync.WaitGroup
	wg.Go(func() {
		_, v := e.validate(validateYAML(", slow", ""))
		assert.True(t, v.OK)
	})
	<-f.entered
	r := e.do("POST", "/api/pipelines/validate", map[string]string{"yaml": validateYAML("", "")})
	assert.Equal(t, http.StatusTooManyRequests, r.code, "%s", r.body)
	assert.Equal(t, "busy", r.errCode(t))
	close(f.release)
	wg.Wait()
	_, v := e.validate(validateYAML("", ""))
	assert.True(t, v.OK, "the place is free again")
}

// Validations are bounded in time: past ValidateTimeout, 504, and the
// validation's work is cancelled.
func TestValidationsAreBoundedInTime(t *testing.T) {
	t.Parallel()
	e, f := slowEnv(t, func(c *server.Config) { c.ValidateTimeout = 100 * time.Millisecond })
	began := time.Now()
	r, _ := e.validate(validateYAML(", slow", ""))
	assert.Equal(t, http.StatusGatewayTimeout, r.code, "%s", r.body)
	assert.Equal(t, "timeout", r.errCode(t))
	assert.Less(t, time.Since(began), 10*time.Second)
	<-f.entered
}

// A sql entry that would create its database validates without creating
// a file anywhere under the root.
func TestValidateCreatesNoDatabase(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, v := e.validate(validateYAML(", {name: sql, path: new.db, write: true, create: true}", ""))
	assert.True(t, v.OK, "%s", r.body)
	_, err := os.Stat(filepath.Join(e.dir, "configs", "new.db"))
	assert.True(t, os.IsNotExist(err), "no database was created: %v", err)
}

// A history line is scrubbed before it is clipped: a secret that the clip
// cut (showing 21 of its 23 characters, which the scrubber no longer
// recognized) never shows in part.
func TestCheckpointsScrubBeforeClipping(t *testing.T) {
	t.Parallel()
	const token = "tok-0123456789abcdefXYZ" // 23 characters
	scrub := redact.New(redact.WithSecrets(token))
	filler := strings.Repeat("x", 79) + " " // the token starts at character 87 of "reply: ..."
	model, err := json.Marshal(map[string]any{"choices": []map[string]any{{"content": filler + token + " and more text after it"}}})
	require.NoError(t, err)
	tool, err := json.Marshal(map[string]any{"output": filler + token})
	require.NoError(t, err)
	toolReq, err := json.Marshal(map[string]any{"tool": "calculator", "input": filler + token})
	require.NoError(t, err)
	cps := server.Checkpoints([]journal.Entry{
		{Seq: 1, Kind: journal.KindModel, Response: model},
		{Seq: 2, Kind: journal.KindTool, Request: toolReq, Response: tool},
	}, scrub)
	require.Len(t, cps, 2)
	for _, cp := range cps {
		assert.NotContains(t, cp.Summary, token[:8], "no part of the token shows: %s", cp.Summary)
		assert.Contains(t, cp.Summary, "[REDACTED", cp.Summary)
	}
}

// A corpus that a posted pipeline's tools would read whole is bounded in
// size (MaxValidateCorpusBytes), so that a validation's memory is.
func TestValidateBoundsTheCorpusRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *server.Config) { c.MaxValidateCorpusBytes = 100 })
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "corpus"), 0o755))
	for _, name := range []string{"a.md", "b.md"} {
		require.NoError(t, os.WriteFile(filepath.Join(e.dir, "corpus", name), []byte("# Doc\n"+strings.Repeat("word ", 12)+"\n"), 0o644))
	}
	r, v := e.validate(validateYAML(", {name: search, corpus: ../corpus/a.md}", ""))
	assert.True(t, v.OK, "%s", r.body)
	for _, p := range []string{"../corpus", "../corpus/"} {
		r, v = e.validate(validateYAML(", {name: search, corpus: "+p+"}", ""))
		assert.Contains(t, refusal(t, r, v, p), "holds more than the 100 bytes of corpus")
	}
}
