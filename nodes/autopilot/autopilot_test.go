package autopilot_test

import (
	"strings"
	"testing"

	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The cascade accepts the first candidate whose answer passes, and the
// candidates after it never run.
func TestCascadeAcceptsTheFirstPassingAnswer(t *testing.T) {
	m := newModel(map[string]reply{"cheap": says("42"), "strong": says("43")})
	st, rec := run(t, apYAML(""), m, "What is 6 times 7?")
	assert.Equal(t, "42", st.Answer)
	assert.True(t, st.Complete)
	assert.Zero(t, m.count("strong"), "the strong candidate does not run")
	got, _ := st.Vars.Get("autopilot.candidate")
	assert.Equal(t, "cheap", got)
	path, _ := st.Vars.Get("autopilot.path")
	assert.JSONEq(t, `["cheap"]`, path)

	plans := decisions(rec, "plan")
	require.Len(t, plans, 1)
	assert.Equal(t, []string{"cheap", "strong"}, plans[0].Data["order"])
	assert.Equal(t, "cascade", plans[0].Data["policy"])
	checks := decisions(rec, "check")
	require.Len(t, checks, 1)
	assert.Equal(t, true, checks[0].Data["pass"])
	assert.Equal(t, []string{"complete"}, checks[0].Data["checks"])
}

// A failed check escalates to the next candidate, whose question tells the
// failed answer and why it failed; the escalation is a trace event.
func TestEscalationPassesTheFailedAnswerAndReason(t *testing.T) {
	m := newModel(map[string]reply{"cheap": says("41\nConfidence: 0.4"), "strong": says("42\nConfidence: high")})
	st, rec := run(t, apYAML("check: {confidence: 0.7}"), m, "What is 6 times 7?")
	assert.Equal(t, "42", st.Answer, "the confidence line is cut from the answer")
	assert.True(t, st.Complete)
	path, _ := st.Vars.Get("autopilot.path")
	assert.JSONEq(t, `["cheap","strong"]`, path)

	prompts := m.promptsOf("strong")
	require.Len(t, prompts, 1)
	assert.Contains(t, prompts[0], "What is 6 times 7?")
	assert.Contains(t, prompts[0], `An earlier attempt with cheap answered "41", which failed the check: confidence 0.40 is below 0.70.`)

	checks := decisions(rec, "check")
	require.Len(t, checks, 2)
	assert.Equal(t, false, checks[0].Data["pass"])
	assert.Equal(t, "strong", checks[0].Data["escalate_to"])
	assert.Equal(t, "confidence 0.40 is below 0.70", checks[0].Data["reason"])
	assert.InDelta(t, 0.4, checks[0].Data["confidence"], 1e-9)
	assert.Contains(t, checks[0].Text, "escalating to strong")
	assert.Equal(t, true, checks[1].Data["pass"])
	assert.InDelta(t, 0.9, checks[1].Data["confidence"], 1e-9, "high is 0.9")
}

// The escalation template is the user's to set.
func TestEscalationTemplateIsConfigurable(t *testing.T) {
	m := newModel(map[string]reply{"cheap": says(""), "strong": says("42")})
	st, _ := run(t, apYAML(`escalation: "RETRY {{.Extra.Question}} after {{.Extra.Candidate}}: {{.Extra.Reason}}"`), m, "Q?")
	assert.Equal(t, "42", st.Answer)
	prompts := m.promptsOf("strong")
	require.Len(t, prompts, 1)
	assert.Contains(t, prompts[0], "RETRY Q? after cheap: ")
}

// The evidence of a failed run (its tool observations) is passed on.
func TestEscalationPassesTheEvidence(t *testing.T) {
	yaml := `name: ap
llm: {provider: fake}
tools: [calculator, code]
nodes:
  - id: solve
    type: autopilot
    check: {verifier: {starlark: "def check(question, answer):\n    return answer == '42'\n"}}
    candidates:
      - {name: actor, graph: {nodes: [{id: a, type: react}], edges: [{from: START, to: a}, {from: a, to: END}]}}
      - ` + inline("strong") + `
edges:
  - {from: START, to: solve}
  - {from: solve, to: END}
`
	m := newModel(map[string]reply{
		"actor":  inOrder("Thought: compute\nAction: calculator\nAction Input: 6*7", "Thought: done\nFinal Answer: 41"),
		"strong": says("42"),
	})
	st, _ := run(t, yaml, m, "What is 6 times 7?")
	assert.Equal(t, "42", st.Answer)
	prompts := m.promptsOf("strong")
	require.Len(t, prompts, 1)
	assert.Contains(t, prompts[0], `An earlier attempt with actor answered "41", which failed the check: the Starlark check returned False.`)
	assert.Contains(t, prompts[0], "What the last attempt found:\n- calculator(6*7): 42")
}

// agreement: k runs k samples; a strict majority's answer passes, no
// majority escalates; every sample's calls count.
func TestAgreementTakesTheMajority(t *testing.T) {
	t.Run("majority", func(t *testing.T) {
		m := newModel(map[string]reply{"cheap": inOrder("Seven", "seven.", "8"), "strong": says("x")})
		st, rec := run(t, apYAML("check: {agreement: 3}"), m, "q")
		assert.Contains(t, []string{"Seven", "seven."}, st.Answer)
		assert.Equal(t, 3, m.count("cheap"))
		assert.Zero(t, m.count("strong"))
		assert.Equal(t, 3, st.Usage.Snapshot().ModelCalls, "every sample is counted")
		checks := decisions(rec, "check")
		require.Len(t, checks, 1)
		assert.Equal(t, 3, checks[0].Data["samples"])
		assert.Contains(t, checks[0].Data["votes"], "×2")
	})
	t.Run("no majority", func(t *testing.T) {
		m := newModel(map[string]reply{"cheap": inOrder("1", "2", "3", "1"), "strong": says("x")})
		st, rec := run(t, apYAML("check: {agreement: 4}"), m, "q")
		assert.Equal(t, "x", st.Answer, "two of four is no strict majority")
		checks := decisions(rec, "check")
		require.Len(t, checks, 2)
		assert.Contains(t, checks[0].Data["reason"], "no strict majority of the 4 samples agree")
		assert.Equal(t, 4, m.count("cheap"))
	})
	t.Run("samples are labelled apart", func(t *testing.T) {
		m := newModel(map[string]reply{"cheap": says("7"), "strong": says("x")})
		_, rec := run(t, apYAML("check: {agreement: 2}"), m, "q")
		nodes := map[string]bool{}
		for _, e := range rec.Events() {
			if strings.HasPrefix(e.Node, "candidate ") {
				nodes[strings.SplitN(e.Node, "/", 2)[0]] = true
			}
		}
		assert.Equal(t, map[string]bool{"candidate cheap sample 1": true, "candidate cheap sample 2": true}, nodes)
	})
}

// Each kind of check passes a good answer and fails a bad one.
func TestChecksPassAndFail(t *testing.T) {
	g24 := suite.Game24Question([]int{4, 5, 6, 10})
	cases := []struct {
		name, check, question, good, bad, reason string
	}{
		{"complete", "{complete: true}", "q", "fine", "", "empty answer"},
		{"verifier tool", "{verifier: {tool: checker}}", "q", "fine", "bad", "the verifier tool checker said: FAIL: the answer is bad"},
		{"verifier tool input", `{verifier: {tool: checker, input: "{{.Extra.Candidate}}:{{.Extra.Answer}}", fail_pattern: "^FAIL"}}`, "q", "fine", "bad", "said: FAIL"},
		{"scorer game24", "{verifier: {scorer: game24}}", g24, "(10 - 6) * 5 + 4", "4 * 5 + 6 - 10", "the game24 scorer"},
		{"starlark pair", `{verifier: {starlark: "def check(question, answer):\n    return (answer.isdigit(), 'not a number: ' + answer)\n"}}`, "q", "12", "twelve", "not a number: twelve"},
		{"confidence", "{confidence: 0.5}", "q", "12\nConfidence: 80%", "12\nConfidence: low", "confidence 0.30 is below 0.50"},
		{"confidence missing", "{confidence: 0.5}", "q", "12\nconfidence = 0.9", "12", "no confidence reported"},
		{"judge", "{judge: true}", "q", "right", "wrong", "the judge said: FAIL the answer is wrong"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, good := range []bool{true, false} {
				answer := tc.bad
				if good {
					answer = tc.good
				}
				m := newModel(map[string]reply{"cheap": says(answer), "strong": says("fallback")})
				m.judge = func(p string, _ llm.CallMeta, _ int) string {
					if strings.Contains(p, "Proposed answer: wrong") {
						return "FAIL the answer is wrong"
					}
					return "PASS"
				}
				st, rec := run(t, apYAML("check: "+tc.check), m, tc.question)
				checks := decisions(rec, "check")
				require.NotEmpty(t, checks)
				if good {
					assert.Equal(t, true, checks[0].Data["pass"], "%v", checks[0].Data)
					assert.Zero(t, m.count("strong"))
					assert.NotEqual(t, "fallback", st.Answer)
					continue
				}
				assert.Equal(t, false, checks[0].Data["pass"])
				assert.Contains(t, checks[0].Data["reason"], tc.reason)
				assert.Equal(t, 1, m.count("strong"))
			}
		})
	}
}

// The judge's call is the node's, role judge, labelled as the simulator's
// judge reads it.
func TestJudgeCallsTheNodesModelAsJudge(t *testing.T) {
	m := newModel(map[string]reply{"cheap": says("391"), "strong": says("x")})
	var meta llm.CallMeta
	m.judge = func(_ string, c llm.CallMeta, _ int) string { meta = c; return "PASS\nfine" }
	st, _ := run(t, apYAML("check: {judge: true}"), m, "What is 17 times 23?")
	assert.Equal(t, "391", st.Answer)
	prompts := m.promptsOf("judge")
	require.Len(t, prompts, 1)
	assert.Contains(t, prompts[0], "Question: What is 17 times 23?\nProposed answer: 391\n")
	assert.Equal(t, "solve", meta.Node)
	assert.Equal(t, "autopilot", meta.Kind)
	assert.Equal(t, "ap", meta.Pipeline, "the judge is the autopilot pipeline's call")
}

// A candidate's own check replaces the node's.
func TestCandidateCheckOverridesTheDefault(t *testing.T) {
	settings := `check: {verifier: {tool: checker}}
candidates:
  - {name: cheap, check: {complete: true}, graph: {nodes: [{id: a, type: direct}], edges: [{from: START, to: a}, {from: a, to: END}]}}
  - ` + inline("strong")
	m := newModel(map[string]reply{"cheap": says("bad"), "strong": says("x")})
	st, _ := run(t, apYAML(settings), m, "q")
	assert.Equal(t, "bad", st.Answer, "cheap's own check has no verifier")
}

// When no candidate passes, the last answer stands, marked incomplete.
func TestTheLastAnswerStandsIncomplete(t *testing.T) {
	m := newModel(map[string]reply{"cheap": says("bad 1"), "strong": says("bad 2")})
	st, rec := run(t, apYAML("check: {verifier: {tool: checker}}"), m, "q")
	assert.Equal(t, "bad 2", st.Answer)
	assert.False(t, st.Complete)
	assert.Equal(t, state.FailureWrong, st.Failure)
	assert.Contains(t, st.Reason, "no candidate passed its check; the last, strong, failed it: the verifier tool checker said")
	got, _ := st.Vars.Get("autopilot.candidate")
	assert.Equal(t, "strong", got)
	checks := decisions(rec, "check")
	require.Len(t, checks, 2)
	assert.NotContains(t, checks[1].Data, "escalate_to")
}

// output: var:NAME and export map the chosen run into vars.
func TestOutputVarAndExport(t *testing.T) {
	settings := `output: var:result
export: [note]
candidates:
  - {name: cheap, graph: {nodes: [{id: a, type: direct, output: "var:note"}, {id: b, type: direct}], edges: [{from: START, to: a}, {from: a, to: b}, {from: b, to: END}]}}`
	m := newModel(map[string]reply{"cheap": inOrder("a note", "the answer")})
	yaml := apYAML(settings)
	p, err := build(t, yaml, m, buildOpts{})
	require.NoError(t, err)
	res, err := p.Run(t.Context(), state.Task{ID: "t", Question: "q"}, nil)
	require.NoError(t, err)
	v, _ := res.State.Vars.Get("result")
	assert.Equal(t, "the answer", v)
	v, _ = res.State.Vars.Get("note")
	assert.Equal(t, "a note", v)
}
