package plan_test

import (
	"context"
	"testing"

	"github.com/planner-engine/planner/plan"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/calc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// namedTool is a tool that echoes its input, for registries in tests.
type namedTool string

func (n namedTool) Name() string        { return string(n) }
func (n namedTool) Description() string { return "echoes its input" }
func (n namedTool) Call(_ context.Context, in string) (string, error) {
	return string(n) + ": " + in, nil
}

func registry(t *testing.T) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry([]tools.Tool{calc.New(), namedTool("search"), namedTool("web_search")})
	require.NoError(t, err)
	return reg
}

type stepView struct {
	ID, Description, Tool, Input string
	DependsOn                    []string
}

func view(steps []plan.Step) []stepView {
	out := make([]stepView, len(steps))
	for i, s := range steps {
		out[i] = stepView{s.ID, s.Description, s.Tool, s.Input, s.DependsOn}
	}
	return out
}

func TestParsePlanReadsEveryAcceptedForm(t *testing.T) {
	twoSteps := []stepView{
		{ID: "1", Description: "Find the year Uranus was discovered", Tool: "search", Input: "Uranus discovered"},
		{ID: "2", Description: "Subtract", Tool: "calculator", Input: "#E1 - 1700", DependsOn: []string{"1"}},
	}
	cases := []struct {
		name string
		text string
		want []stepView
	}{
		{"bare JSON object", `{"steps":[{"id":"1","description":"Find the year Uranus was discovered","tool":"search","input":"Uranus discovered","depends_on":[]},{"id":"2","description":"Subtract","tool":"calculator","input":"#E1 - 1700","depends_on":["1"]}]}`, twoSteps},
		{"fenced JSON after prose", "Here is my plan:\n```json\n{\"steps\":[{\"id\":1,\"description\":\"Find the year Uranus was discovered\",\"tool\":\"search\",\"input\":\"Uranus discovered\"},{\"id\":2,\"description\":\"Subtract\",\"tool\":\"calculator\",\"input\":\"#E1 - 1700\",\"depends_on\":[1]}]}\n```\nDone.", twoSteps},
		{"JSON embedded in prose after a bracketed citation", `See [1]. Plan: {"steps":[{"description":"Find the year Uranus was discovered","tool":"search","input":"Uranus discovered"},{"description":"Subtract","tool":"calculator","input":"#E1 - 1700"}]} ok`, twoSteps},
		{"bare array with loose dependency names", `[{"id":"1","description":"Find the year Uranus was discovered","tool":"search","input":"Uranus discovered"},{"id":"2","description":"Subtract","tool":"calculator","input":"#E1 - 1700","depends_on":["#E1"]}]`, twoSteps},
		{"plan key and object input", `{"plan":[{"id":"a","description":"Compute","tool":"calculator","input":{"expression":"2+2"}}]}`,
			[]stepView{{ID: "a", Description: "Compute", Tool: "calculator", Input: `{"expression":"2+2"}`}}},
		{"ReWOO lines", "Plan: Find the year Uranus was discovered\n#E1 = search[Uranus discovered]\nPlan: Subtract\n#E2 = calculator[#E1 - 1700]\n", twoSteps},
		{"numbered list depends on every earlier step", "1. Search for Uranus\n2) Search for Neptune\nStep 3: Subtract the years",
			[]stepView{{ID: "1", Description: "Search for Uranus"}, {ID: "2", Description: "Search for Neptune", DependsOn: []string{"1"}},
				{ID: "3", Description: "Subtract the years", DependsOn: []string{"1", "2"}}}},
		{"numbered list with a tool call", "1. search[Uranus discovered]\n2. **calculator[1846 - 1781]**",
			[]stepView{{ID: "1", Description: "search[Uranus discovered]", Tool: "search", Input: "Uranus discovered"},
				{ID: "2", Description: "calculator[1846 - 1781]", Tool: "calculator", Input: "1846 - 1781", DependsOn: []string{"1"}}}},
		{"comma-separated dependencies", `{"steps":[{"id":"1","description":"a"},{"id":"2","description":"b"},{"id":"3","description":"c","depends_on":"1, 2"}]}`,
			[]stepView{{ID: "1", Description: "a"}, {ID: "2", Description: "b"}, {ID: "3", Description: "c", DependsOn: []string{"1", "2"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			steps, err := plan.Parse(tc.text)
			require.NoError(t, err)
			assert.Equal(t, tc.want, view(steps))
		})
	}
}

func TestParsePlanRejectsTextWithoutAPlan(t *testing.T) {
	cases := []struct {
		name, text, contains string
	}{
		{"empty", "  \n", "empty"},
		{"prose", "I think we should look it up.", "no plan found"},
		{"steps is not an array", `{"steps": "search for it"}`, "must be an array"},
		{"empty steps", `{"steps": []}`, "no steps"},
		{"step is not an object", `{"steps": ["search"]}`, "not a JSON object"},
		{"bad dependency type", `{"steps": [{"id":"1","description":"a","depends_on":[{"x":1}]}]}`, "depends_on"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := plan.Parse(tc.text)
			require.Error(t, err)
			assert.ErrorIs(t, err, plan.ErrMalformedPlan)
			assert.Contains(t, err.Error(), tc.contains)
		})
	}
}

func TestValidatePlanReportsEachProblemWithItsSentinel(t *testing.T) {
	step := func(id, tool, input string, deps ...string) plan.Step {
		return plan.Step{ID: id, Description: "do " + id, Tool: tool, Input: input, DependsOn: deps}
	}
	cases := []struct {
		name     string
		steps    []plan.Step
		max      int
		want     []error
		contains string
	}{
		{"cycle", []plan.Step{step("1", "search", "x", "3"), step("2", "search", "y", "1"), step("3", "search", "z", "2")}, 8, []error{plan.ErrPlanCycle}, "cycle"},
		{"self dependency", []plan.Step{step("1", "search", "x", "1")}, 8, []error{plan.ErrPlanCycle}, "depends on itself"},
		{"dangling dependency", []plan.Step{step("1", "search", "x"), step("2", "calculator", "1+1", "7")}, 8, []error{plan.ErrDanglingDependency}, `step "2" depends on step "7"`},
		{"dangling #E reference", []plan.Step{step("1", "calculator", "#E4 + 1")}, 8, []error{plan.ErrDanglingDependency}, `"4"`},
		{"unknown tool", []plan.Step{step("1", "serch", "x")}, 8, []error{plan.ErrUnknownTool}, "available tools: calculator, search, web_search"},
		{"too many steps", []plan.Step{step("1", "search", "a"), step("2", "search", "b"), step("3", "search", "c")}, 2, []error{plan.ErrTooManySteps}, "at most 2"},
		{"duplicate id", []plan.Step{step("1", "search", "a"), step("1", "search", "b")}, 8, []error{plan.ErrDuplicateStep}, `"1"`},
		{"empty plan", nil, 8, []error{plan.ErrMalformedPlan}, "no steps"},
		{"step with nothing to do", []plan.Step{{ID: "1"}}, 8, []error{plan.ErrMalformedPlan}, "neither a description nor a tool"},
		{"several problems at once", []plan.Step{step("1", "serch", "x", "9"), step("2", "search", "y", "2")}, 8,
			[]error{plan.ErrUnknownTool, plan.ErrDanglingDependency, plan.ErrPlanCycle}, "serch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := plan.Rules{Tools: registry(t), MaxSteps: tc.max}.Check(tc.steps)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.ErrorIs(t, err, w)
			}
			assert.Contains(t, err.Error(), tc.contains)
		})
	}
}

func TestValidatePlanAcceptsValidPlans(t *testing.T) {
	cases := []struct {
		name  string
		steps []plan.Step
		rules plan.Rules
	}{
		{"diamond", []plan.Step{{ID: "1", Description: "a", Tool: "search"}, {ID: "2", Description: "b", Tool: "search", DependsOn: []string{"1"}},
			{ID: "3", Description: "c", Tool: "search", DependsOn: []string{"1"}}, {ID: "4", Description: "d", Tool: "calculator", Input: "#E2 + #E3"}}, plan.Rules{MaxSteps: 4}},
		{"tool names differing in case and separators", []plan.Step{{ID: "1", Description: "a", Tool: "Web-Search"}, {ID: "2", Description: "b", Tool: "CALCULATOR"}}, plan.Rules{}},
		{"steps without tools when tools are optional", []plan.Step{{ID: "1", Description: "think"}}, plan.Rules{}},
		{"depends on a finished step", []plan.Step{{ID: "3", Description: "c", Tool: "calculator", Input: "#E1 * 2"}},
			plan.Rules{Known: []plan.Step{{ID: "1", Status: plan.StatusDone}}}},
		{"extra tool name", []plan.Step{{ID: "1", Description: "read", Tool: "LLM"}}, plan.Rules{Tools: registry(t).WithNames("llm"), RequireTools: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rules := tc.rules
			if rules.Tools == nil {
				rules.Tools = registry(t)
			}
			assert.NoError(t, rules.Check(tc.steps))
		})
	}
}

func TestRulesRejectMissingToolsAndReusedIDs(t *testing.T) {
	reg := registry(t)
	err := plan.Rules{Tools: reg, RequireTools: true}.Check([]plan.Step{{ID: "1", Description: "think about it"}})
	require.Error(t, err)
	assert.ErrorIs(t, err, plan.ErrMissingTool)
	assert.Contains(t, err.Error(), "calculator, search, web_search")

	err = plan.Rules{Tools: reg, Known: []plan.Step{{ID: "1"}, {ID: "2"}}}.Check([]plan.Step{{ID: "2", Description: "again", Tool: "search"}})
	require.Error(t, err)
	assert.ErrorIs(t, err, plan.ErrDuplicateStep)
	assert.Contains(t, err.Error(), `number new steps after "2"`)
}

func TestValidatePlanWithoutRegistrySkipsToolCheck(t *testing.T) {
	assert.NoError(t, plan.Rules{}.Check([]plan.Step{{ID: "1", Description: "x", Tool: "anything"}}))
}

func TestOrderRunsDependenciesFirstAndKeepsPlanOrderOtherwise(t *testing.T) {
	steps := []plan.Step{
		{ID: "c", Input: "#Ea and #Eb"},
		{ID: "a"},
		{ID: "d", DependsOn: []string{"c"}},
		{ID: "b"},
		{ID: "e"},
	}
	order, err := plan.Order(steps)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, order)

	order, err = plan.Order([]plan.Step{{ID: "1"}, {ID: "2", DependsOn: []string{"1"}}, {ID: "3", Input: "#E2"}, {ID: "4"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "2", "3", "4"}, order)

	_, err = plan.Order([]plan.Step{{ID: "1", DependsOn: []string{"2"}}, {ID: "2", DependsOn: []string{"1"}}})
	assert.ErrorIs(t, err, plan.ErrPlanCycle)
}

func TestReferencesAndReplaceReferences(t *testing.T) {
	assert.Equal(t, []string{"2", "10", "x_1"}, plan.References("#E2 - #E10 + #E2 * #Ex_1"))
	got := plan.ReplaceReferences("#E2 - #E10", func(id string) string { return map[string]string{"2": "1930", "10": "1906"}[id] })
	assert.Equal(t, "1930 - 1906", got)
}

func TestFindJSONSkipsInvalidCandidates(t *testing.T) {
	raws := plan.FindJSON("a {broken [1] then {\"k\": [2]} and ```\n[3]\n```")
	var got []string
	for _, r := range raws {
		got = append(got, string(r))
	}
	assert.Equal(t, []string{"[3]", "[1]", `{"k": [2]}`}, got)
	assert.Empty(t, plan.FindJSON("no json here"))
}
