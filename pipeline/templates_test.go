package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildWithTools builds like build, with the built-in tools.
func buildWithTools(t *testing.T, path string) (*pipeline.Pipeline, error) {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	return pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: planner.NodeKinds(), Tools: builtin.Factory{},
		Models: llm.NewFactory(llm.WithProvider("scripted", scripted.Label, scripted.Build))})
}

const edgesAB = "edges:\n  - {from: START, to: a}\n  - {from: a, to: END}\n"

func TestPromptTemplateErrorsFailValidationAtTheSettingsLine(t *testing.T) {
	cases := []struct {
		name     string
		yaml     string
		line     int
		sentinel error
		contains []string
	}{
		{"typo of a state field", header + "  - id: a\n    type: cot\n    temperature: 0\n    prompt: |\n      Question: {{.Questoin}}\n" + edgesAB, 6, nodekind.ErrUnknownField,
			[]string{`node "a" (cot): setting "prompt"`, "unknown template field .Questoin", "did you mean .Question?"}},
		{"typo of a planner extra", "name: t\ntools: [calculator]\nnodes:\n  - id: a\n    type: planner\n    prompt: \"{{.Question}} {{.Extra.Toolz}}\"\n" + edgesAB, 6, nodekind.ErrUnknownField,
			[]string{`node "a" (planner)`, ".Extra.Toolz", "did you mean .Extra.Tools?", ".Extra.Schema"}},
		{"typo in a nested react block", "name: t\ntools: [calculator]\nnodes:\n  - id: a\n    type: execute\n    react:\n      max_iterations: 3\n      prompt: \"{{.Extra.Taks}}\"\n" + edgesAB, 8, nodekind.ErrUnknownField,
			[]string{`setting "react.prompt"`, ".Extra.Taks", "did you mean .Extra.Task?"}},
		{"typo in a branch of a tot prompt", header + "  - id: a\n    type: tot\n    evaluate_prompt: |\n      {{.Question}}\n      {{if .Extra.Path}}{{.Extra.Paht}}{{end}}\n" + edgesAB, 5, nodekind.ErrUnknownField,
			[]string{`setting "evaluate_prompt"`, "template line 2", ".Extra.Paht"}},
		{"a note no node writes", header + "  - id: a\n    type: cot\n    prompt: \"{{.Question}} {{.Notes.sumary}}\"\n" + edgesAB, 5, pipeline.ErrUnknownNote,
			[]string{`node "a" (cot): setting "prompt": {{.Notes.sumary}}: no node of this pipeline writes note "sumary"`, "notes written: none", "output: note:KEY"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, "p.yaml", tc.yaml)
			_, err := buildWithTools(t, path)
			require.Error(t, err)
			assert.ErrorIs(t, err, config.ErrInvalid)
			assert.ErrorIs(t, err, tc.sentinel)
			var ce *config.Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.line, ce.Line, "error: %v", err)
			assert.Contains(t, err.Error(), path+":")
			for _, s := range tc.contains {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestPromptFileTyposPointAtThePromptFileSetting(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ask.tmpl"), []byte("Answer this.\n{{.Questoin}}\n"), 0o644))
	path := filepath.Join(dir, "p.yaml")
	require.NoError(t, os.WriteFile(path, []byte(header+"  - id: a\n    type: direct\n    prompt_file: ask.tmpl\n"+edgesAB), 0o644))
	_, err := buildWithTools(t, path)
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 5, ce.Line)
	assert.Contains(t, err.Error(), `setting "prompt_file"`)
	assert.Contains(t, err.Error(), "ask.tmpl line 2: unknown template field .Questoin")
}

func TestNotesWrittenByANodeMayBeRead(t *testing.T) {
	path := write(t, "p.yaml", header+"  - {id: a, type: direct, output: \"note:summary\"}\n  - {id: b, type: cot, prompt: \"{{.Notes.summary}}: {{.Question}}\"}\n"+
		"edges:\n  - {from: START, to: a}\n  - {from: a, to: b}\n  - {from: b, to: END}\n")
	_, err := buildWithTools(t, path)
	require.NoError(t, err)
}

func TestPlannerPromptWithoutToolsIsCompletedAndReported(t *testing.T) {
	// The planner's custom prompt names neither the tools nor the plan
	// format; both are appended, and the model sees them.
	script := write(t, "s.yaml", `replies:
  - node: planner
    regex: '(?s)Write a plan for: What is 17.*--- added automatically: the custom prompt does not use \.Extra\.Tools ---\nTools:\n- calculator:.*matching this schema'

    text: '{"steps": [{"id": "1", "description": "Compute", "tool": "calculator", "input": "17*23+4"}]}'
  - node: solver
    text: "Answer: 395"
`)
	path := write(t, "p.yaml", "name: t\nllm: {provider: scripted, script: "+script+"}\ntools: [calculator]\nnodes:\n"+
		"  - id: plan\n    type: planner\n    require_tools: true\n    prompt: \"Write a plan for: {{.Question}}\"\n"+
		"  - {id: work, type: execute, strategy: rewoo}\n  - {id: solve, type: solver}\n"+
		"edges:\n  - {from: START, to: plan}\n  - {from: plan, to: work}\n  - {from: work, to: solve}\n  - {from: solve, to: END}\n")
	p, err := buildWithTools(t, path)
	require.NoError(t, err)

	notices := p.Notices()
	require.Len(t, notices, 2)
	assert.Equal(t, path+`:8: node "plan" (planner): prompt does not use {{.Extra.Tools}}, so it was appended to the end of the prompt after a line "--- added automatically: ..."; use the field in the template to place it yourself`, notices[0].String())
	assert.Contains(t, notices[1].Msg, "{{.Extra.Schema}}")
	assert.Equal(t, "nodes[0].prompt", notices[0].Key)

	rec := &trace.Recorder{}
	res, err := p.Run(context.Background(), state.Task{Question: "What is 17 * 23 + 4?"}, trace.New("r", rec))
	require.NoError(t, err)
	assert.Equal(t, "395", res.State.Answer)
	var infos []trace.Event
	for _, e := range rec.OfKind(trace.KindInfo) {
		if e.Node == "plan" {
			infos = append(infos, e)
		}
	}
	require.Len(t, infos, 2, "each completion is reported once per run")
	assert.Contains(t, infos[0].Text, "{{.Extra.Tools}}")
}
