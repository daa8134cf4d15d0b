package nodes_test

import (
	"testing"

	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// output: var:NAME keeps a node's output in the run's vars, where a later
// node's prompt reads it as {{.Vars.NAME}}.
func TestOutputVarFeedsALaterPrompt(t *testing.T) {
	m, err := scripted.New(scripted.Script{Replies: []scripted.Reply{
		{Node: "draft", Text: "Let me think.\nAnswer: Paris"},
		{Node: "check", Contains: "Draft answer: Paris.", Text: "Paris"},
	}})
	require.NoError(t, err)
	p := buildYAML(t, `name: vars
nodes:
  - {id: draft, type: cot, output: "var:draft"}
  - id: check
    type: direct
    prompt: "{{.Question}} Draft answer: {{.Vars.draft}}."
edges:
  - {from: START, to: draft}
  - {from: draft, to: check}
  - {from: check, to: END}
`, m)
	st, rec := runTask(t, p, state.Task{Question: "What is the capital of France?"})
	assert.Equal(t, "Paris", st.Answer)
	got, ok := st.Vars.Get("draft")
	assert.True(t, ok)
	assert.Equal(t, "Paris", got, "the extracted answer, as for a note")
	assert.Equal(t, 2, m.Calls())
	var info []string
	for _, e := range rec.OfKind(trace.KindInfo) {
		if e.Data["var"] == "draft" {
			info = append(info, e.Text)
		}
	}
	assert.Equal(t, []string{"var draft = Paris"}, info)
}

func TestOutputVarNeedsAValidName(t *testing.T) {
	for _, bad := range []string{"var:", "var:9lives", "var:a-b"} {
		_, err := nodes.NewDirect(nodekind.Env{}, nodekind.Spec{ID: "d", Type: "direct", Settings: map[string]any{"output": bad}})
		requireSettingError(t, err, "output")
		assert.ErrorContains(t, err, "invalid var name", bad)
	}
	_, err := nodes.NewDirect(nodekind.Env{}, nodekind.Spec{ID: "d", Type: "direct", Settings: map[string]any{"output": "vars:x"}})
	requireSettingError(t, err, "output")
	assert.ErrorContains(t, err, `"var:<name>"`, "the error lists the forms")
}

// A template that reads a var nothing writes is a load error at its line.
func TestAVarNothingWritesIsALoadError(t *testing.T) {
	_, err := buildYAMLErr(t, `name: vars
nodes:
  - {id: draft, type: cot, output: "var:draft"}
  - id: check
    type: direct
    prompt: "{{.Question}} Draft answer: {{.Vars.drfat}}."
edges:
  - {from: START, to: draft}
  - {from: draft, to: check}
  - {from: check, to: END}
`)
	require.ErrorIs(t, err, pipeline.ErrUnknownVar)
	assert.ErrorContains(t, err, `p.yaml:6: node "check" (direct): setting "prompt" reads var "drfat", which nothing in this pipeline writes (vars written: draft)`)
}
