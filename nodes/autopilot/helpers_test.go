package autopilot_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/tools/search"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// fixedModels gives every llm block the one model m, with no empty
// retries.
type fixedModels struct{ m llms.Model }

func (f fixedModels) Model(context.Context, config.LLM, string) (llm.Model, error) {
	return llm.Model{LLM: f.m}, nil
}

// reply answers one call: the prompt (last message) and its call
// metadata; n is the call's number among its pipeline's calls, from 1.
type reply func(prompt string, meta llm.CallMeta, n int) string

// byPipeline is a model that answers each pipeline's calls (by
// llm.CallMeta.Pipeline) with its own reply, and the judge's (role judge)
// with judge, counting calls per pipeline and keeping the prompts.
type byPipeline struct {
	mu      sync.Mutex
	replies map[string]reply
	judge   reply
	calls   map[string]int
	prompts map[string][]string
}

func newModel(replies map[string]reply) *byPipeline {
	return &byPipeline{replies: replies, calls: map[string]int{}, prompts: map[string][]string{}}
}

func (m *byPipeline) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	meta := llm.CallMetaFrom(ctx)
	key := meta.Pipeline
	if meta.Role == "judge" {
		key = "judge"
	}
	p := llmtest.LastText(msgs)
	m.mu.Lock()
	m.calls[key]++
	n := m.calls[key]
	m.prompts[key] = append(m.prompts[key], p)
	f := m.replies[key]
	if key == "judge" {
		f = m.judge
	}
	m.mu.Unlock()
	if f == nil {
		return nil, fmt.Errorf("test model: no reply for %q", key)
	}
	return llmtest.TextResponse(f(p, meta, n)), nil
}

func (m *byPipeline) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

func (m *byPipeline) count(key string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[key]
}

func (m *byPipeline) promptsOf(key string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.prompts[key]...)
}

// says answers every call with text.
func says(text string) reply { return func(string, llm.CallMeta, int) string { return text } }

// inOrder answers the n-th call with texts[n-1] (the last one after).
func inOrder(texts ...string) reply {
	return func(_ string, _ llm.CallMeta, n int) string { return texts[min(n, len(texts))-1] }
}

// checkerTool is a verifier tool: "FAIL: ..." for an input holding
// "bad", "ok" otherwise.
type checkerTool struct{}

func (checkerTool) Name() string        { return "checker" }
func (checkerTool) Description() string { return "checks an answer" }
func (checkerTool) Call(_ context.Context, input string) (string, error) {
	if strings.Contains(input, "bad") {
		return "FAIL: the answer is bad", nil
	}
	return "ok", nil
}

// toolFactory adds the checker tool to the built-in ones.
type toolFactory struct{ builtin.Factory }

func (f toolFactory) Names() []string { return append(f.Factory.Names(), "checker") }

func (f toolFactory) Tools(ctx context.Context, spec config.Tool, baseDir string) ([]tools.Tool, error) {
	if spec.Name == "checker" {
		return []tools.Tool{checkerTool{}}, nil
	}
	return f.Factory.Tools(ctx, spec, baseDir)
}

// inline is an inline candidate graph of one direct node.
func inline(name string) string {
	return fmt.Sprintf(`{name: %s, graph: {nodes: [{id: a, type: direct}], edges: [{from: START, to: a}, {from: a, to: END}]}}`, name)
}

// apYAML is a pipeline of one autopilot node with settings (indented
// under the node) and the cheap and strong inline candidates unless
// settings lists candidates itself.
func apYAML(settings string) string {
	if !strings.Contains(settings, "candidates:") {
		settings += "\ncandidates:\n  - " + inline("cheap") + "\n  - " + inline("strong")
	}
	var b strings.Builder
	b.WriteString("name: ap\nllm: {provider: fake}\ntools: [checker, code]\nnodes:\n  - id: solve\n    type: autopilot\n")
	for _, line := range strings.Split(strings.TrimSpace(settings), "\n") {
		b.WriteString("    " + line + "\n")
	}
	b.WriteString("edges:\n  - {from: START, to: solve}\n  - {from: solve, to: END}\n")
	return b.String()
}

// buildOpts are the options of build.
type buildOpts struct {
	noKeywords bool
	files      map[string]string // more files in the pipeline's folder
	dir        string            // the folder; default a new temporary one
}

// build writes yaml as p.yaml (and o.files) and builds it with m.
func build(t *testing.T, yaml string, m llms.Model, o buildOpts) (*pipeline.Pipeline, error) {
	t.Helper()
	dir := o.dir
	if dir == "" {
		dir = t.TempDir()
	}
	for name, text := range o.files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	path := filepath.Join(dir, "p.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o600))
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	opts := pipeline.Options{Registry: planner.NodeKinds(), Models: fixedModels{m}, Tools: toolFactory{}}
	if !o.noKeywords {
		opts.Keywords = search.Keywords{}
	}
	p, err := pipeline.Build(context.Background(), cfg, opts)
	if err == nil {
		t.Cleanup(func() { _ = p.Close() })
	}
	return p, err
}

// run builds yaml with m and runs it on question.
func run(t *testing.T, yaml string, m llms.Model, question string) (*state.State, *trace.Recorder) {
	t.Helper()
	p, err := build(t, yaml, m, buildOpts{})
	require.NoError(t, err)
	rec := &trace.Recorder{}
	res, err := p.Run(context.Background(), state.Task{ID: "t1", Question: question}, trace.New("r", rec))
	require.NoError(t, err)
	return res.State, rec
}

// decisions returns the autopilot's decision events of kind what ("plan",
// "check").
func decisions(rec *trace.Recorder, what string) []trace.Event {
	var out []trace.Event
	for _, e := range rec.OfKind(trace.KindDecision) {
		if e.Data["autopilot"] == what {
			out = append(out, e)
		}
	}
	return out
}
