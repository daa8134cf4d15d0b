package main

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/llm/cassette"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const model = "gpt-4o-mini"

// The tests that call the openai provider are not parallel: it reads
// OPENAI_BASE_URL and OPENAI_API_KEY from the process environment.

func TestRunTalksToAnOpenAICompatibleServer(t *testing.T) {
	tests := []struct {
		name, config, task, content string
		apiKey                      string // "" leaves OPENAI_API_KEY unset
		wantAnswer, wantAuth        string
		wantSteps                   []string
	}{
		{name: "direct", config: configPath("direct.yaml"), task: "What is the capital of France?",
			content: "Paris", apiKey: "sk-test-direct-0123456789", wantAnswer: "Paris",
			wantAuth: "Bearer sk-test-direct-0123456789", wantSteps: []string{"answer"}},
		{name: "cot", config: configPath("cot.yaml"), task: "What is 17 * 23 + 4?",
			content: "17 * 23 = 391, and 391 + 4 = 395.\nAnswer: 395", apiKey: "sk-test-cot-0123456789",
			wantAnswer: "395", wantAuth: "Bearer sk-test-cot-0123456789", wantSteps: []string{"reason"}},
		{name: "loopback server without a key", config: configPath("direct.yaml"), task: "Name a prime number.",
			content: "7", wantAnswer: "7", wantSteps: []string{"answer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeOpenAI(t, func(int, chatRequest) reply {
				return reply{content: tt.content, promptTokens: 31, completion: 12}
			})
			useOpenAI(t, srv.baseURL(), tt.apiKey)
			res := cli(t, "run", "--config", tt.config, "--llm", "openai:"+model, "--json", tt.task)
			require.Equal(t, 0, res.code, "stderr: %s", res.stderr)

			var out runOutput
			res.lastJSON(t, &out)
			assert.Equal(t, tt.wantAnswer, out.Answer)
			assert.True(t, out.Complete)
			assert.Equal(t, tt.wantSteps, out.Steps)
			assert.Equal(t, 1, out.Usage.ModelCalls)
			assert.Equal(t, 31, out.Usage.PromptTokens, "prompt tokens come from the server's usage")
			assert.Equal(t, 12, out.Usage.CompletionTokens)
			assert.False(t, out.Usage.Estimated)
			assert.Positive(t, out.Usage.CostUSD, "%s is in the price table", model)

			reqs := srv.requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, model, reqs[0].Model)
			require.NotEmpty(t, reqs[0].Messages)
			assert.Equal(t, "user", reqs[0].Messages[len(reqs[0].Messages)-1].Role)
			assert.Contains(t, reqs[0].text(), tt.task)
			if tt.wantAuth != "" {
				assert.Equal(t, tt.wantAuth, reqs[0].Authorization)
			} else {
				assert.True(t, strings.HasPrefix(reqs[0].Authorization, "Bearer ") && len(reqs[0].Authorization) > len("Bearer "),
					"a placeholder key is sent to a loopback server, got %q", reqs[0].Authorization)
			}
		})
	}
}

// uniqueSecret returns a key-shaped value that cannot occur by chance.
func uniqueSecret(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return "sk-proj-" + hex.EncodeToString(b)
}

func TestSecretsAppearInNoOutput(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		json     bool
		wantCode int
		// echo puts the key into the model's reply itself, as an echoing
		// proxy would, so it reaches the answer, the trace and --json.
		echo bool
	}{
		{name: "successful run, json", status: http.StatusOK, json: true, wantCode: 0},
		{name: "successful run, terminal", status: http.StatusOK, wantCode: 0},
		{name: "key echoed in the reply, json", status: http.StatusOK, json: true, wantCode: 0, echo: true},
		{name: "key echoed in the reply, terminal", status: http.StatusOK, wantCode: 0, echo: true},
		{name: "rejected key, json", status: http.StatusUnauthorized, json: true, wantCode: 1},
		{name: "rejected key, terminal", status: http.StatusUnauthorized, wantCode: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secret := uniqueSecret(t)
			srv := newFakeOpenAI(t, func(_ int, req chatRequest) reply {
				// Echo the whole key back, as a careless server would, so
				// that only redaction keeps it out of the outputs.
				content := "Answer: 4"
				if tt.echo {
					content = "Your key is " + strings.TrimPrefix(req.Authorization, "Bearer ") + ".\nAnswer: 4 " + strings.TrimPrefix(req.Authorization, "Bearer ")
				}
				return reply{status: tt.status, content: content, promptTokens: 9, completion: 3,
					errMessage: "Incorrect API key provided: " + strings.TrimPrefix(req.Authorization, "Bearer ")}
			})
			dir := t.TempDir()
			tracePath, cassettePath := filepath.Join(dir, "trace.jsonl"), filepath.Join(dir, "run.cassette.jsonl")
			args := []string{"run", "--config", configPath("cot.yaml"), "--llm", "openai:" + model, "--verbose",
				"--trace", tracePath, "--record", cassettePath, "What is 2 + 2?"}
			if tt.json {
				args = append(args, "--json")
			}
			useOpenAI(t, srv.baseURL(), secret)
			res := cli(t, args...)
			require.Equal(t, tt.wantCode, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)

			// The secret really was used, and each output holds the run.
			reqs := srv.requests()
			require.Len(t, reqs, 1, "401 is not retried")
			require.Equal(t, "Bearer "+secret, reqs[0].Authorization)
			traceData, err := os.ReadFile(tracePath)
			require.NoError(t, err)
			cassetteData, err := os.ReadFile(cassettePath)
			require.NoError(t, err)
			entries, err := cassette.ReadEntries(strings.NewReader(string(cassetteData)))
			require.NoError(t, err)
			require.Len(t, entries, 1)
			if tt.status == http.StatusUnauthorized {
				assert.Contains(t, entries[0].Error, "401")
				assert.Contains(t, res.stdout+res.stderr, "OPENAI_API_KEY", "the error names the variable to fix")
				assert.Contains(t, res.stdout+res.stderr, "[REDACTED]", "the echoed key was redacted, not dropped")
			} else {
				require.NotNil(t, entries[0].Response)
				assert.Contains(t, res.stdout+res.stderr, "Answer")
			}

			assert.NotEmpty(t, traceData)
			outputs := map[string]string{"stdout": res.stdout, "stderr": res.stderr,
				"trace": string(traceData), "cassette": string(cassetteData)}
			for name, text := range outputs {
				assert.NotContains(t, text, secret, "the API key leaked into %s", name)
				assert.NotContains(t, text, secret[len("sk-proj-"):], "part of the API key leaked into %s", name)
			}
		})
	}
}

func TestRecordedRunReplaysOfflineAndFlagsChangedPrompts(t *testing.T) {
	const task = "What is 17 * 23 + 4?"
	dir := t.TempDir()
	// A pipeline with its own llm block, so its fast retry settings apply
	// while recording (--llm would replace the whole block).
	src, err := os.ReadFile(configPath("cot.yaml"))
	require.NoError(t, err)
	cfgPath := filepath.Join(dir, "cot.yaml")
	require.NoError(t, os.WriteFile(cfgPath, append(src,
		[]byte("llm: {provider: openai, model: "+model+", retry: {base_delay: 1ms, max_delay: 5ms}}\n")...), 0o600))
	cassettePath := filepath.Join(dir, "cot.cassette.jsonl")

	// Record: the server is overloaded once, then answers.
	srv := newFakeOpenAI(t, func(n int, _ chatRequest) reply {
		if n == 0 {
			return reply{status: http.StatusTooManyRequests, errMessage: "Rate limit reached, retry later"}
		}
		return reply{content: "17 * 23 = 391, and 391 + 4 = 395.\nAnswer: 395", promptTokens: 40, completion: 15}
	})
	useOpenAI(t, srv.baseURL(), uniqueSecret(t))
	recorded := cli(t, "run", "--config", cfgPath, "--record", cassettePath, "--json", "-q", task)
	require.Equal(t, 0, recorded.code, "stderr: %s", recorded.stderr)
	require.Len(t, srv.requests(), 2, "one 429, then the retried call")
	var want runOutput
	recorded.lastJSON(t, &want)
	require.Equal(t, "395", want.Answer)
	assert.Equal(t, cassettePath, want.Cassette)

	f, err := os.Open(cassettePath)
	require.NoError(t, err)
	entries, err := cassette.ReadEntries(f)
	require.NoError(t, f.Close())
	require.NoError(t, err)
	require.Len(t, entries, 2, "the recorder sits inside the retry middleware: both attempts are recorded")
	assert.Contains(t, entries[0].Error, "429")
	require.NotNil(t, entries[1].Response)
	srv.srv.Close()

	t.Run("same task replays to the identical result", func(t *testing.T) {
		res := cli(t, "run", "--config", cfgPath, "--llm", "replay:"+cassettePath, "--json", "-q", task)
		require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
		var got runOutput
		res.lastJSON(t, &got)
		assert.Equal(t, want.Answer, got.Answer)
		assert.Equal(t, want.Complete, got.Complete)
		assert.Equal(t, want.Steps, got.Steps)
		assert.Equal(t, want.Usage, got.Usage, "tokens and cost are replayed too")
		assert.Positive(t, got.Usage.CostUSD)
		assert.NotContains(t, res.stderr, "not replayed", "every recording was used")
	})

	t.Run("changed task fails with a diff of the prompt", func(t *testing.T) {
		const changed = "What is 17 * 24 + 4?"
		res := cli(t, "run", "--config", cfgPath, "--llm", "replay:"+cassettePath, "-q", changed)
		require.Equal(t, 1, res.code, "stdout: %s", res.stdout)
		assert.Contains(t, res.stderr, "does not match the recording")
		_, err := findLine(res.stderr, "-", task)
		assert.NoError(t, err, "stderr: %s", res.stderr)
		_, err = findLine(res.stderr, "+", changed)
		assert.NoError(t, err, "stderr: %s", res.stderr)
	})

	t.Run("recording over the replayed cassette is refused", func(t *testing.T) {
		before, err := os.ReadFile(cassettePath)
		require.NoError(t, err)
		res := cli(t, "run", "--config", cfgPath, "--llm", "replay:"+cassettePath, "--record", cassettePath, task)
		assert.Equal(t, 2, res.code)
		assert.Contains(t, res.stderr, "overwrite")
		after, err := os.ReadFile(cassettePath)
		require.NoError(t, err)
		assert.Equal(t, before, after)
	})
}

func TestRecordLeavesTheFileAloneWhenNoModelIsCalled(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keep.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("precious\n"), 0o600))
	res := cli(t, "run", "--config", configPath("does-not-exist.yaml"), "--llm", "sim", "--record", path, "task")
	require.Equal(t, 1, res.code)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "precious\n", string(data))
}

func TestReplayWarnsAboutRecordingsItDidNotUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		return path
	}
	script := write("script.yaml", "replies:\n  - text: first\n  - text: second\n")
	// Two direct nodes send the same prompt; the shorter pipeline sends it once.
	twoCalls := write("two.yaml", `name: two
nodes:
  - {id: a, type: direct}
  - {id: b, type: direct}
edges:
  - {from: START, to: a}
  - {from: a, to: b}
  - {from: b, to: END}
`)
	oneCall := write("one.yaml", `name: one
nodes:
  - {id: a, type: direct}
edges:
  - {from: START, to: a}
  - {from: a, to: END}
`)
	cassettePath := filepath.Join(dir, "two.jsonl")
	recorded := cli(t, "run", "--config", twoCalls, "--llm", "scripted:"+script, "--record", cassettePath, "-q", "Say something.")
	require.Equal(t, 0, recorded.code, "stderr: %s", recorded.stderr)

	full := cli(t, "run", "--config", twoCalls, "--llm", "replay:"+cassettePath, "-q", "Say something.")
	require.Equal(t, 0, full.code, "stderr: %s", full.stderr)
	assert.NotContains(t, full.stderr, "not replayed")

	short := cli(t, "run", "--config", oneCall, "--llm", "replay:"+cassettePath, "-q", "Say something.")
	require.Equal(t, 0, short.code, "stderr: %s", short.stderr)
	assert.Contains(t, short.stderr, "1 recorded call(s) of the cassette were not replayed")
}

// stderrLines returns the non-empty lines of stderr that start with
// "planner: ", the lines the command line writes about an error.
func stderrLines(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "planner: ") {
			out = append(out, line)
		}
	}
	return out
}

func TestRunWithoutAModelSaysWhatToPassInOneLine(t *testing.T) {
	t.Parallel()
	res := cli(t, "run", "--config", configPath("cot.yaml"), "What is 17 * 23?")

	require.Equal(t, 2, res.code, "stderr: %s", res.stderr)
	lines := stderrLines(res.stderr)
	require.Len(t, lines, 1, res.stderr)
	for _, want := range []string{"--llm", "PLANNER_LLM", "--llm openai:gpt-4o-mini", "OPENAI_API_KEY", "--llm sim --suite demo --task demo-07"} {
		assert.Contains(t, lines[0], want)
	}

	// The offline command it suggests works: chain of thought runs but,
	// with no search, cannot know the fact; ReAct looks it up.
	res = cli(t, "run", "--config", configPath("cot.yaml"), "--llm", "sim", "--suite", "demo", "--task", "demo-07")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	assert.Contains(t, res.stdout, "\nReference: Pisa (wrong; scorer em)\n")
	res = cli(t, "run", "--config", configPath("react.yaml"), "--llm", "sim", "--suite", "demo", "--task", "demo-07")
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	assert.Contains(t, res.stdout, "\nAnswer: Pisa\n")
}

func TestTheSimPlaysTheTasksOfASuite(t *testing.T) {
	t.Parallel()
	gsm8k := filepath.Join(repoRoot, "eval", "suite", "testdata", "gsm8k.jsonl")
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantAnswer string
	}{
		{name: "a demo task by id", args: []string{"--config", configPath("react.yaml"), "--llm", "sim", "--suite", "demo", "--task", "demo-07"}, wantAnswer: "Pisa"},
		{name: "the demo suite is the default", args: []string{"--config", configPath("rewoo.yaml"), "--llm", "sim:noisy", "--task", "demo-08"}, wantAnswer: "Venetia Burney"},
		{name: "a demo question, matched", args: []string{"--config", configPath("react.yaml"), "--llm", "sim", "in which city was Galileo Galilei born"}, wantAnswer: "Pisa"},
		{name: "a demo question on stdin", args: []string{"--config", configPath("react.yaml"), "--llm", "sim", "-"}, stdin: "Who discovered Saturn's moon Iapetus?\n", wantAnswer: "Giovanni Domenico Cassini"},
		{name: "a task of a suite file", args: []string{"--config", configPath("cot.yaml"), "--llm", "sim", "--suite", gsm8k, "--task", "gsm8k-1"}, wantAnswer: "12.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := execPlanner(t, invocation{args: append([]string{"run", "--json"}, tt.args...), stdin: tt.stdin})
			require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
			var out runOutput
			res.lastJSON(t, &out)
			assert.Equal(t, tt.wantAnswer, out.Answer)
			assert.True(t, out.Complete)
		})
	}
}

func TestTheSimRefusesWhatItCannotPlayInOneLine(t *testing.T) {
	t.Parallel()
	tasks := filepath.Join(repoRoot, "eval", "suite", "testdata", "tasks.jsonl")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		{name: "a question of no suite", args: []string{"--llm", "sim", "What is 17 * 23?"}, wantCode: 2,
			want: []string{"the sim model plays only tasks of a suite with gold solutions", "--suite demo --task", "--llm scripted:FILE"}},
		{name: "a question of no task of the named suite", args: []string{"--llm", "sim:noisy", "--suite", "demo", "What is 17 * 23?"}, wantCode: 2,
			want: []string{"no task of the demo suite", "--task ID"}},
		{name: "a task without a gold solution", args: []string{"--llm", "sim", "--suite", tasks, "--task", "capital"}, wantCode: 2,
			want: []string{"task capital of the " + tasks + " suite has none"}},
		{name: "an unknown task", args: []string{"--llm", "sim", "--task", "demo-99"}, wantCode: 2,
			want: []string{`no such task "demo-99" in the demo suite (ids demo-01 to demo-40)`}},
		{name: "a missing suite file", args: []string{"--llm", "sim", "--suite", tasks + ".absent", "--task", "x"}, wantCode: 2,
			want: []string{"--suite " + tasks + ".absent: ", "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := cli(t, append([]string{"run", "--config", configPath("cot.yaml")}, tt.args...)...)
			require.Equal(t, tt.wantCode, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			assert.Empty(t, res.stdout, "nothing runs")
			lines := stderrLines(res.stderr)
			require.Len(t, lines, 1, res.stderr)
			for _, w := range tt.want {
				assert.Contains(t, lines[0], w)
			}
		})
	}
}

func TestModelErrorsNameTheFlagOrVariable(t *testing.T) {
	// Not parallel: the openai provider reads the process environment.
	useOpenAI(t, "https://api.openai.invalid/v1", "")
	cassette := filepath.Join(t.TempDir(), "absent.jsonl")
	tests := []struct {
		name string
		env  []string
		llm  string
		// want is the whole first line after "planner: ", up to what
		// follows in parentheses.
		want string
	}{
		{name: "a model without its provider", llm: "gpt-4o",
			want: "--llm gpt-4o: no provider given; use --llm openai:gpt-4o (providers: anthropic, googleai, mistral, ollama, openai, replay, scripted, sim)"},
		{name: "a provider without its model", llm: "openai",
			want: "--llm openai: no model given; use --llm openai:gpt-4o-mini (providers: "},
		{name: "an unknown provider", llm: "gpt:4",
			want: `--llm gpt:4: unknown llm provider "gpt" (providers: `},
		{name: "a missing API key", llm: "openai:gpt-4o",
			want: "--llm openai:gpt-4o: missing API key: set environment variable OPENAI_API_KEY"},
		{name: "an unknown sim profile", llm: "sim:nosuch",
			want: `--llm sim:nosuch: unknown profile "nosuch" (profiles: flaky-api, noisy, perfect, slow)`},
		{name: "a missing cassette", llm: "replay:" + cassette,
			want: "--llm replay:" + cassette + ": cannot read the cassette: open " + cassette + ": no such file or directory"},
		{name: "a missing script", llm: "scripted:" + cassette,
			want: "--llm scripted:" + cassette + ": cannot read the script: open " + cassette + ": no such file or directory"},
		{name: "the variable", env: []string{"PLANNER_LLM=gpt-4o"},
			want: "PLANNER_LLM=gpt-4o: no provider given; use PLANNER_LLM=openai:gpt-4o (providers: "},
		{name: "the variable's missing key", env: []string{"PLANNER_LLM=openai:gpt-4o"},
			want: "PLANNER_LLM=openai:gpt-4o: missing API key: set environment variable OPENAI_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"run", "--config", configPath("cot.yaml")}
			if tt.llm != "" {
				args = append(args, "--llm", tt.llm)
			}
			res := execPlanner(t, invocation{env: tt.env, args: append(args, "What is 17 * 23?")})
			assert.Equal(t, 2, res.code, "a bad model is a usage error; stderr: %s", res.stderr)
			lines := stderrLines(res.stderr)
			require.Len(t, lines, 1, res.stderr)
			assert.True(t, strings.HasPrefix(lines[0], "planner: "+tt.want), "got  %s\nwant planner: %s...", lines[0], tt.want)
			assert.NotContains(t, res.stderr, "cot.yaml", "the error is the flag's, not the pipeline file's")
		})
	}
}

func TestAnUnansweredScriptedCallIsReportedOnceWithTheScript(t *testing.T) {
	t.Parallel()
	script := filepath.Join(repoRoot, "examples", "scripts", "cot_demo.yaml")
	for _, mode := range []string{"trace", "--quiet", "--json"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			args := []string{"run", "--config", configPath("direct.yaml"), "--llm", "scripted:" + script}
			if mode != "trace" {
				args = append(args, mode)
			}
			// The prompt mentions what would make a provider's error
			// retryable; an unanswered scripted call is not retried anyway.
			res := cli(t, append(args, "Why does curl say connection refused (status code 503)?")...)
			require.Equal(t, 1, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			shown := res.stderr
			if mode != "--json" {
				shown += res.stdout
			}
			assert.Equal(t, 1, strings.Count(shown, "unexpected call"), "printed once:\nstdout: %s\nstderr: %s", res.stdout, res.stderr)
			assert.Contains(t, shown, script+" has no reply for call 1")
			assert.Contains(t, shown, `the next one, reply 1, wants node cot and a prompt containing "17 rows"`)
			assert.Contains(t, shown, "call from node answer (direct)")
			assert.NotContains(t, shown, "retrying")
			if mode == "--json" {
				var out runOutput
				res.lastJSON(t, &out)
				assert.Contains(t, out.Error, script)
				assert.Equal(t, 1, out.Usage.ModelAttempts, "a scripted failure is not retried")
			}
		})
	}
}
