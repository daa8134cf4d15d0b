package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reactData is the folder of the ReAct paper's prompt files next to the
// repository; the tests that read it skip when it is absent.
const reactData = "../../shared/data/react"

func TestExamplesFromAFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	write("prompts.json", `{"b_key": "\nQuestion: B\nThought 1: b\n", "a_key": 3}`)
	write("plain.txt", "\nQuestion: plain\n")
	write("list.json", `["x"]`)
	env := nodekind.Env{Tools: registry(t, echoTool()), BaseDir: dir}

	base := executor.ReActConfig{Style: executor.StyleCompletion}
	base.System = "{{.Extra.Examples}}"
	cases := []struct {
		name, file, key, want string
	}{
		{"the string under the key of a JSON object", "prompts.json", "b_key", "\nQuestion: B\nThought 1: b\n"},
		{"a whole plain file", "plain.txt", "", "\nQuestion: plain\n"},
		{"a whole JSON file without a key", "list.json", "", `["x"]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			cfg.ExamplesFile, cfg.ExamplesKey = tc.file, tc.key
			sm, err := scripted.New(text(" t\nAction 1: Finish[a]"))
			require.NoError(t, err)
			m := newRecModel(sm)
			env := env
			env.Model = llm.Model{LLM: m}
			l, err := executor.NewLoop(env, cfg)
			require.NoError(t, err)
			_, err = l.Run(t.Context(), hookedState(state.Task{}), executor.Input{Task: "q"})
			require.NoError(t, err)
			assert.Equal(t, tc.want+"Question: q\nThought 1:", completionPrompt(t, requests(m)[0]))
			assert.Empty(t, l.ExamplesNotice())
		})
	}

	errs := []struct {
		name     string
		cfg      executor.ReActConfig
		key      string
		contains []string
	}{
		{"a missing key lists the keys", executor.ReActConfig{ExamplesFile: "prompts.json", ExamplesKey: "webthink_simple6"}, "examples_key",
			[]string{`no key "webthink_simple6"`, "a_key, b_key"}},
		{"a value that is not a string", executor.ReActConfig{ExamplesFile: "prompts.json", ExamplesKey: "a_key"}, "examples_key", []string{"not a string"}},
		{"a key of a file that is not a JSON object", executor.ReActConfig{ExamplesFile: "plain.txt", ExamplesKey: "k"}, "examples_key", []string{"JSON object"}},
		{"a missing file of the paper's says where to get it", executor.ReActConfig{ExamplesFile: "nope/prompts_naive.json", ExamplesKey: "webthink_simple6"}, "examples_file",
			[]string{"prompts_naive.json", executor.PaperPromptsURL, "examples_fallback"}},
		{"a key without a file", executor.ReActConfig{ExamplesKey: "k"}, "examples_key", []string{"examples_file"}},
		{"a fallback without a file", executor.ReActConfig{ExamplesFallback: executor.ExamplesDemoQA}, "examples_fallback", []string{"examples_file"}},
		{"an unknown fallback", executor.ReActConfig{ExamplesFile: "x.txt", ExamplesFallback: "paper"}, "examples_fallback", []string{`"demo-qa" or "demo-fever"`}},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := executor.NewLoop(env, tc.cfg)
			require.Error(t, err)
			assert.ErrorIs(t, err, config.ErrSettings)
			var se *config.SettingError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.key, se.Key)
			for _, s := range tc.contains {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
	_, err := executor.NewLoop(env, executor.ReActConfig{ExamplesFile: "none.txt"})
	assert.ErrorIs(t, err, executor.ErrExamples)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestAMissingExamplesFileFallsBackWithANotice(t *testing.T) {
	cfg := paperCfg()
	cfg.Examples = ""
	cfg.ExamplesFile, cfg.ExamplesKey, cfg.ExamplesFallback = "absent/fever.json", "webthink_simple3", executor.ExamplesDemoFEVER
	sm, err := scripted.New(text(" t\nAction 1: Finish[SUPPORTS]"))
	require.NoError(t, err)
	m := newRecModel(sm)
	l := newLoop(t, m, cfg, echoTool())
	assert.Contains(t, l.ExamplesNotice(), filepath.Join("absent", "fever.json")+" not found")
	assert.Contains(t, l.ExamplesNotice(), "NOT the paper's own examples")
	assert.Contains(t, l.ExamplesNotice(), "prompts/fever.json from "+executor.PaperPromptsURL)
	rec := &trace.Recorder{}
	out, err := l.Run(trace.WithTracer(t.Context(), trace.New("r", rec)), hookedState(state.Task{}), executor.Input{NodeID: "act", Task: "q"})
	require.NoError(t, err)
	assert.Equal(t, "SUPPORTS", out.Answer)
	guards := rec.OfKind(trace.KindGuard)
	require.Len(t, guards, 1)
	assert.Equal(t, executor.GuardExamplesFallback, guards[0].Data["guard"])
	assert.Equal(t, l.ExamplesNotice(), guards[0].Text)
	fever, _ := executor.FallbackExamples(executor.ExamplesDemoFEVER)
	assert.Equal(t, "INSTRUCTION\n"+fever+"Question: q\nThought 1:", completionPrompt(t, requests(m)[0]))
}

// paperStep is one step of a few-shot trajectory in the paper's layout.
type paperStep struct {
	thought, action, obs string
}

// trajectory is one few-shot example: its question or claim line and its
// steps, the last of which finishes.
type trajectory struct {
	label, task string
	steps       []paperStep
	// body is the text of the steps as the prompt shows them, from the
	// first "Thought 1:" to the end of the last observation.
	body string
}

var taskLine = regexp.MustCompile(`(?m)^(Question|Claim): (.*)$`)

// trajectories splits few-shot examples in the paper's layout into their
// trajectories, reading every step by the harness's own labels.
func trajectories(t *testing.T, examples string) []trajectory {
	t.Helper()
	var out []trajectory
	locs := taskLine.FindAllStringSubmatchIndex(examples, -1)
	for k, loc := range locs {
		end := len(examples)
		if k+1 < len(locs) {
			end = locs[k+1][0]
		}
		tr := trajectory{label: examples[loc[2]:loc[3]], task: examples[loc[4]:loc[5]]}
		text := examples[loc[1]+1 : end]
		pos := 0
		for i := 1; ; i++ {
			th := fmt.Sprintf("Thought %d: ", i)
			require.True(t, strings.HasPrefix(text[pos:], th), "trajectory %q step %d: %q", tr.task, i, text[pos:min(len(text), pos+40)])
			rest := text[pos+len(th):]
			thought, rest, ok := strings.Cut(rest, fmt.Sprintf("\nAction %d: ", i))
			require.True(t, ok)
			action, rest, _ := strings.Cut(rest, "\n")
			if strings.HasPrefix(action, "Finish[") {
				tr.steps = append(tr.steps, paperStep{thought: thought, action: action})
				tr.body = text[:pos]
				break
			}
			rest, ok = strings.CutPrefix(rest, fmt.Sprintf("Observation %d: ", i))
			require.True(t, ok, "step %d of %q has no observation", i, tr.task)
			obs, _, ok := strings.Cut(rest, fmt.Sprintf("\nThought %d: ", i+1))
			require.True(t, ok)
			tr.steps = append(tr.steps, paperStep{thought: thought, action: action, obs: obs})
			pos = len(text) - len(rest) + len(obs) + 1
		}
		out = append(out, tr)
	}
	return out
}

// fixtureTool plays the recorded observations of one trajectory: each
// call must be the next recorded Search or Lookup, with its input as
// written in brackets.
type fixtureTool struct {
	name  string
	mu    *sync.Mutex
	queue *[]paperStep
}

func (f fixtureTool) Name() string        { return f.name }
func (f fixtureTool) Description() string { return "recorded " + f.name }
func (f fixtureTool) Call(_ context.Context, in string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(*f.queue) == 0 {
		return "", fmt.Errorf("unexpected call %s[%s]", f.name, in)
	}
	next := (*f.queue)[0]
	*f.queue = (*f.queue)[1:]
	if want := f.name + "[" + in + "]"; want != next.action {
		return "", fmt.Errorf("called %s, the recording has %s", want, next.action)
	}
	return next.obs, nil
}

// loadShipped reads the react node's settings of a shipped config.
func loadShipped(t *testing.T, name string) (executor.ReActConfig, *config.Pipeline) {
	t.Helper()
	p, err := config.Load(filepath.Join("..", "configs", name))
	require.NoError(t, err)
	require.Len(t, p.Nodes, 1)
	var cfg executor.ReActConfig
	require.NoError(t, config.Decode(p.Nodes[0].Settings, &cfg))
	return cfg, p
}

// replay runs each trajectory of examples through a loop of cfg whose
// Search and Lookup play the recorded observations, and checks that the
// loop rendered the steps byte for byte as the examples show them, passed
// every input as written, and finished with the recorded answer.
// The prompt's head must end with the examples exactly as read.
func replay(t *testing.T, cfg executor.ReActConfig, baseDir, examples string) {
	t.Helper()
	trs := trajectories(t, examples)
	require.NotEmpty(t, trs)
	for _, tr := range trs {
		t.Run(tr.task, func(t *testing.T) {
			s := scripted.Script{}
			for i, st := range tr.steps {
				s.Replies = append(s.Replies, scripted.Reply{Text: fmt.Sprintf(" %s\nAction %d: %s", st.thought, i+1, st.action)})
			}
			queue := append([]paperStep(nil), tr.steps[:len(tr.steps)-1]...)
			var mu sync.Mutex
			sm, err := scripted.New(s)
			require.NoError(t, err)
			m := newRecModel(sm)
			l, err := executor.NewLoop(nodekind.Env{Model: llm.Model{LLM: m}, BaseDir: baseDir,
				Tools: registry(t, fixtureTool{"Search", &mu, &queue}, fixtureTool{"Lookup", &mu, &queue})}, cfg)
			require.NoError(t, err)
			out, err := l.Run(t.Context(), hookedState(state.Task{}), executor.Input{Task: tr.task})
			require.NoError(t, err)
			assert.Empty(t, queue, "every recorded call was made")
			for i, e := range out.Entries[:len(out.Entries)-1] {
				assert.Equal(t, tr.steps[i].obs, e.Observation, "step %d", i+1)
				assert.Empty(t, e.Error, "step %d", i+1)
			}
			last := tr.steps[len(tr.steps)-1].action
			assert.True(t, out.Complete)
			assert.Equal(t, strings.TrimSuffix(strings.TrimPrefix(last, "Finish["), "]"), out.Answer)
			reqs := requests(m)
			require.Len(t, reqs, len(tr.steps))
			line := tr.label + ": " + tr.task + "\n"
			header, ok := strings.CutSuffix(completionPrompt(t, reqs[0]), line+"Thought 1:")
			require.True(t, ok, "the first prompt ends with the task line and \"Thought 1:\"")
			assert.True(t, strings.HasSuffix(header, examples), "the head ends with the examples as read")
			assert.Equal(t, header+line+tr.body+fmt.Sprintf("Thought %d:", len(tr.steps)), completionPrompt(t, reqs[len(reqs)-1]))
		})
	}
}

func TestShippedPaperConfigsReplayTheirFallbackExamples(t *testing.T) {
	t.Setenv("PLANNER_REACT_PROMPTS", filepath.Join(t.TempDir(), "absent"))
	for _, tc := range []struct{ config, fallback string }{
		{"react_hotpotqa.yaml", executor.ExamplesDemoQA},
		{"react_fever.yaml", executor.ExamplesDemoFEVER},
	} {
		t.Run(tc.config, func(t *testing.T) {
			cfg, p := loadShipped(t, tc.config)
			assert.Equal(t, tc.fallback, cfg.ExamplesFallback)
			examples, ok := executor.FallbackExamples(tc.fallback)
			require.True(t, ok)
			dir, err := filepath.Abs(filepath.Dir(p.File))
			require.NoError(t, err)
			// The shipped docstore over the demo corpus must give back
			// every observation the built-in examples show.
			ts, err := builtin.Factory{}.Tools(t.Context(), p.Tools[0], dir)
			require.NoError(t, err)
			for _, tr := range trajectories(t, examples) {
				ctx := tools.WithRunState(t.Context(), tools.NewRunState())
				reg := registry(t, ts...)
				for i, st := range tr.steps[:len(tr.steps)-1] {
					name, input, _ := strings.Cut(strings.TrimSuffix(st.action, "]"), "[")
					out, err := reg.Call(ctx, name, input)
					require.NoError(t, err)
					assert.Equal(t, st.obs, out, "%s step %d", tr.task, i+1)
				}
			}
			replay(t, cfg, dir, examples)
		})
	}
}

func TestShippedPaperConfigsReplayThePapersExamples(t *testing.T) {
	abs, err := filepath.Abs(reactData)
	require.NoError(t, err)
	if _, err := os.Stat(abs); err != nil {
		t.Skipf("the ReAct paper's prompt files are not in %s", abs)
	}
	t.Setenv("PLANNER_REACT_PROMPTS", abs)
	for _, tc := range []struct{ config, file, key, label string }{
		{"react_hotpotqa.yaml", "prompts_naive.json", "webthink_simple6", "Question"},
		{"react_fever.yaml", "fever.json", "webthink_simple3", "Claim"},
	} {
		t.Run(tc.config, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(abs, tc.file))
			require.NoError(t, err)
			var prompts map[string]string
			require.NoError(t, json.Unmarshal(b, &prompts))
			examples := prompts[tc.key]
			require.NotEmpty(t, examples)
			cfg, p := loadShipped(t, tc.config)
			assert.Equal(t, filepath.Join(abs, tc.file), cfg.ExamplesFile)
			assert.Equal(t, tc.key, cfg.ExamplesKey)
			dir, err := filepath.Abs(filepath.Dir(p.File))
			require.NoError(t, err)
			l, err := executor.NewLoop(nodekind.Env{Tools: registry(t, echoTool()), BaseDir: dir}, cfg)
			require.NoError(t, err)
			assert.Empty(t, l.ExamplesNotice(), "the paper's file was found")
			trs := trajectories(t, examples)
			require.NotEmpty(t, trs)
			for _, tr := range trs {
				assert.Equal(t, tc.label, tr.label)
			}
			replay(t, cfg, dir, examples)
		})
	}
}
