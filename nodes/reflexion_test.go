package nodes_test

import (
	"context"
	"strings"
	"testing"

	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/scripted"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/nodes"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reflexionYAML is configs/reflexion.yaml with an exact-match evaluator
// and only the calculator.
const reflexionYAML = `name: reflexion_test
tools: [calculator]
limits: {max_steps: 12}
nodes:
  - id: act
    type: react
    max_iterations: 4
  - id: evaluate
    type: evaluate
    method: exact
    max_trials: %TRIALS%
  - id: reflect
    type: reflect
edges:
  - {from: START, to: act}
  - {from: act, to: evaluate}
  - from: evaluate
    to: {pass: END, retry: reflect}
  - {from: reflect, to: act}
`

const lesson = "I added before multiplying; compute 3 * 5 + 3 with the calculator."

var arithmeticTask = state.Task{ID: "t1", Question: "What is 3 * 5 + 3?", Answer: "18"}

func reflexionPipeline(t *testing.T, trials string, replies ...scripted.Reply) (*llmtest.Recorder, *state.State, *trace.Recorder, *scripted.Model) {
	t.Helper()
	rec, m := script(t, true, replies...)
	p := buildYAML(t, strings.ReplaceAll(reflexionYAML, "%TRIALS%", trials), rec)
	st, tr := runTask(t, p, arithmeticTask)
	return rec, st, tr, m
}

func TestReflexionInjectsTheLessonIntoTheNextTrialAndPasses(t *testing.T) {
	rec, st, tr, m := reflexionPipeline(t, "3",
		scripted.Reply{Node: "act", Text: "Thought: 3 plus 5 is 8, plus 3... no, 15 + 2.\nFinal Answer: 17"},
		scripted.Reply{Node: "reflect", Role: "reflect", Contains: "Your answer: 17", Text: "Lesson: " + lesson},
		scripted.Reply{Node: "act", Contains: "1. " + lesson, Text: "Thought: use the calculator.\nAction: calculator\nAction Input: 3 * 5 + 3"},
		scripted.Reply{Node: "act", Contains: "Observation", Text: "Thought: the calculator says 18.\nFinal Answer: 18"},
	)
	assert.Equal(t, 0, m.Remaining(), "every scripted reply was used")
	assert.Equal(t, "18", st.Answer)
	assert.True(t, st.Complete)
	assert.Empty(t, st.Failure)

	acts := []request{}
	for _, r := range requests(rec, "") {
		if r.caller.Node == "act" {
			acts = append(acts, r)
		}
	}
	require.Len(t, acts, 3)
	assert.NotContains(t, acts[0].prompt, lesson, "trial 1 has no lesson yet")
	assert.Contains(t, acts[1].prompt, "Lessons from earlier attempts at this task")
	assert.Contains(t, acts[1].prompt, lesson, "trial 2 sees the lesson")
	assert.Contains(t, acts[2].prompt, lesson, "the lesson stays for the whole trial")

	require.Len(t, st.Trials, 2)
	assert.Equal(t, state.Trial{Answer: "17", Success: false, Feedback: st.Trials[0].Feedback, Lesson: lesson}, st.Trials[0])
	assert.Contains(t, st.Trials[0].Feedback, `reference "18"`)
	assert.True(t, st.Trials[1].Success)
	assert.Equal(t, "18", st.Trials[1].Answer)
	assert.Equal(t, []string{lesson}, st.Reflections)

	decisions := tr.OfKind(trace.KindDecision)
	require.Len(t, decisions, 2, "one verdict per trial")
	assert.Equal(t, 1, decisions[0].Data["trial"])
	assert.Equal(t, false, decisions[0].Data["pass"])
	assert.Equal(t, 2, decisions[1].Data["trial"])
	assert.Equal(t, true, decisions[1].Data["pass"])
	reflections := tr.OfKind(trace.KindReflection)
	require.Len(t, reflections, 1)
	assert.Equal(t, lesson, reflections[0].Text)
	assert.Equal(t, 1, reflections[0].Data["trial"])
}

func TestReflexionKeepsTheLastAnswerIncompleteWhenTrialsRunOut(t *testing.T) {
	_, st, tr, m := reflexionPipeline(t, "2",
		scripted.Reply{Node: "act", Text: "Final Answer: 17"},
		scripted.Reply{Node: "reflect", Text: "Lesson: " + lesson},
		scripted.Reply{Node: "act", Contains: lesson, Text: "Final Answer: 19"},
	)
	assert.Equal(t, 0, m.Remaining())
	assert.Equal(t, "19", st.Answer, "the last trial's answer is kept")
	assert.False(t, st.Complete)
	assert.Equal(t, "wrong", st.Failure)
	assert.Equal(t, "the answer failed evaluation in all 2 trials", st.Reason)
	require.Len(t, st.Trials, 2)
	assert.Equal(t, lesson, st.Trials[0].Lesson)
	assert.Empty(t, st.Trials[1].Lesson, "no reflection after the last trial")
	assert.Len(t, tr.OfKind(trace.KindDecision), 2)
	assert.Len(t, tr.OfKind(trace.KindReflection), 1)
	ends := tr.OfKind(trace.KindRunEnd)
	require.Len(t, ends, 1)
	assert.Equal(t, false, ends[0].Data["complete"])
}

func TestEvaluateJudgesByMethod(t *testing.T) {
	game24 := state.Task{Question: "Use 1 2 3 4 and + - * / to obtain 24."}
	cases := []struct {
		name     string
		settings map[string]any
		task     state.Task
		answer   string
		complete bool
		replies  []scripted.Reply
		pass     bool
		method   string
	}{
		{"exact match passes", map[string]any{"method": "exact"}, arithmeticTask, "18", true, nil, true, "exact"},
		{"exact mismatch fails", map[string]any{"method": "exact"}, arithmeticTask, "17", true, nil, false, "exact"},
		{"auto scores a task with a reference", nil, arithmeticTask, "17", true, nil, false, "exact"},
		{"auto falls back to the heuristic", nil, state.Task{Question: "q"}, "anything", true, nil, true, "heuristic"},
		{"heuristic fails an unfinished actor", map[string]any{"method": "heuristic"}, arithmeticTask, "18", false, nil, false, "heuristic"},
		{"numeric scorer", map[string]any{"scorer": "numeric"}, arithmeticTask, "18.0", true, nil, true, "exact"},
		{"game24 scorer accepts a valid expression", map[string]any{"scorer": "game24"}, game24, "1 * 2 * 3 * 4", true, nil, true, "exact"},
		{"game24 scorer rejects a wrong one", map[string]any{"scorer": "game24"}, game24, "1 + 2 + 3 + 4", true, nil, false, "exact"},
		{"judge says pass", map[string]any{"method": "judge"}, arithmeticTask, "18", true,
			[]scripted.Reply{{Role: "judge", Contains: "Proposed answer: 18", Text: "PASS\nCorrect."}}, true, "judge"},
		{"judge says fail", map[string]any{"method": "judge"}, arithmeticTask, "18", true,
			[]scripted.Reply{{Role: "judge", Text: "FAIL: the units are missing"}}, false, "judge"},
		{"empty judge reply fails", map[string]any{"method": "judge"}, arithmeticTask, "18", true,
			[]scripted.Reply{{Role: "judge", Text: " "}}, false, "judge"},
		{"custom judge prompt", map[string]any{"method": "judge", "judge_prompt": "Grade strictly: {{.Question}} => {{.Extra.Answer}}"}, arithmeticTask, "18", true,
			[]scripted.Reply{{Role: "judge", Contains: "Grade strictly: What is 3 * 5 + 3? => 18", Text: "pass"}}, true, "judge"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := scripted.New(scripted.Script{Replies: tc.replies})
			require.NoError(t, err)
			built, err := nodes.NewEvaluate(nodekind.Env{Model: llm.Model{LLM: m}}, nodekind.Spec{ID: "evaluate", Type: "evaluate", Settings: tc.settings})
			require.NoError(t, err)
			assert.ElementsMatch(t, []string{"pass", "retry"}, built.Routes)
			st := hookedState(tc.task)
			if tc.complete {
				st.SetAnswer(tc.answer)
			} else {
				st.SetPartial(tc.answer, "ran out of iterations", state.FailureBudget)
			}
			rec := &trace.Recorder{}
			route, err := built.Node.Run(traceCtx(rec), st)
			require.NoError(t, err)
			want := "retry"
			if tc.pass {
				want = "pass"
			}
			assert.Equal(t, want, route)
			require.Len(t, st.Trials, 1)
			assert.Equal(t, tc.pass, st.Trials[0].Success)
			assert.NotEmpty(t, st.Trials[0].Feedback)
			d := rec.OfKind(trace.KindDecision)
			require.Len(t, d, 1)
			assert.Equal(t, tc.method, d[0].Data["method"])
			assert.Equal(t, 0, m.Remaining(), "the judge is called exactly when the method is judge")
		})
	}
}

func TestReflexionNodesRejectBadSettings(t *testing.T) {
	cases := []struct {
		name     string
		ctor     nodekind.Constructor
		settings map[string]any
		key      string
	}{
		{"unknown method", nodes.NewEvaluate, map[string]any{"method": "vibes"}, "method"},
		{"unknown scorer", nodes.NewEvaluate, map[string]any{"scorer": "bleu"}, "scorer"},
		{"negative trials", nodes.NewEvaluate, map[string]any{"max_trials": -1}, "max_trials"},
		{"broken judge template", nodes.NewEvaluate, map[string]any{"judge_prompt": "{{.Question"}, "judge_prompt"},
		{"judge prompt twice", nodes.NewEvaluate, map[string]any{"judge_prompt": "x", "judge_prompt_file": "x.txt"}, "judge_prompt"},
		{"broken reflect template", nodes.NewReflect, map[string]any{"reflect_prompt": "{{end}}"}, "reflect_prompt"},
		{"missing reflect prompt file", nodes.NewReflect, map[string]any{"reflect_prompt_file": "/nonexistent/reflect.txt"}, "reflect_prompt_file"},
		{"negative memory", nodes.NewReflect, map[string]any{"memory": -2}, "memory"},
		{"unknown reflect setting", nodes.NewReflect, map[string]any{"lessons": 2}, "lessons"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.ctor(nodekind.Env{}, nodekind.Spec{ID: "n", Type: "t", Settings: tc.settings})
			requireSettingError(t, err, tc.key)
		})
	}
}

func TestReflectUsesItsPromptAndKeepsABoundedMemory(t *testing.T) {
	m, err := scripted.New(scripted.Script{Replies: []scripted.Reply{
		{Role: "reflect", Contains: "Earlier: old one | older | Feedback: off by one | Steps: - calculator[3 * 5] -> 15", Text: "Lesson: check the last addition"},
	}})
	require.NoError(t, err)
	built, err := nodes.NewReflect(nodekind.Env{Model: llm.Model{LLM: m}}, nodekind.Spec{ID: "reflect", Type: "reflect", Settings: map[string]any{
		"memory":         2,
		"reflect_prompt": "Earlier: {{join .Reflections \" | \"}} | Feedback: {{.Extra.Feedback}} | Steps: {{trim .Extra.Steps}}",
	}})
	require.NoError(t, err)
	st := hookedState(arithmeticTask)
	st.Reflections = []string{"old one", "older"}
	st.Scratchpad = []state.Entry{{Tool: "calculator", Input: "3 * 5", Observation: "15"}, {Final: "17"}}
	st.Trials = []state.Trial{{Answer: "17", Feedback: "off by one"}}
	st.SetPartial("17", "budget", state.FailureBudget)
	_, err = built.Node.Run(context.Background(), st)
	require.NoError(t, err)
	assert.Equal(t, []string{"older", "check the last addition"}, st.Reflections, "the oldest lesson is dropped")
	assert.Equal(t, "check the last addition", st.Trials[0].Lesson)
	assert.Empty(t, st.Scratchpad, "the next trial starts clean")
	assert.Empty(t, st.Answer)
	assert.False(t, st.Done)
	assert.Empty(t, st.Failure, "the failed trial's failure kind does not carry over")
}

func TestReflectWritesAFallbackLessonForAnEmptyReply(t *testing.T) {
	st, _, err := runNode(t, nodes.NewReflect, "reflect", nil, scripted.Texts("Lesson:"), arithmeticTask)
	require.NoError(t, err)
	require.Len(t, st.Reflections, 1)
	assert.NotEmpty(t, st.Reflections[0])
}
