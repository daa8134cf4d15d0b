package planner_test

import (
	"context"
	"errors"
	"testing"

	"github.com/planner-engine/planner/agent"
	"github.com/planner-engine/planner/planner"
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

func view(steps []agent.Step) []stepView {
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
			steps, err := planner.ParsePlan(tc.text)
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
			_, err := planner.ParsePlan(tc.text)
			require.Error(t, err)
			assert.ErrorIs(t, err, planner.ErrMalformedPlan)
			assert.Contains(t, err.Error(), tc.contains)
		})
	}
}

func TestValidatePlanReportsEachProblemWithItsSentinel(t *testing.T) {
	step := func(id, tool, input string, deps ...string) agent.Step {
		return agent.Step{ID: id, Description: "do " + id, Tool: tool, Input: input, DependsOn: deps}
	}
	cases := []struct {
		name     string
		steps    []agent.Step
		max      int
		want     []error
		contains string
	}{
		{"cycle", []agent.Step{step("1", "search", "x", "3"), step("2", "search", "y", "1"), step("3", "search", "z", "2")}, 8, []error{planner.ErrPlanCycle}, "cycle"},
		{"self dependency", []agent.Step{step("1", "search", "x", "1")}, 8, []error{planner.ErrPlanCycle}, "depends on itself"},
		{"dangling dependency", []agent.Step{step("1", "search", "x"), step("2", "calculator", "1+1", "7")}, 8, []error{planner.ErrDanglingDependency}, `step "2" depends on step "7"`},
		{"dangling #E reference", []agent.Step{step("1", "calculator", "#E4 + 1")}, 8, []error{planner.ErrDanglingDependency}, `"4"`},
		{"unknown tool", []agent.Step{step("1", "serch", "x")}, 8, []error{planner.ErrUnknownTool, tools.ErrUnknownTool}, "available tools: calculator, search, web_search"},
		{"too many steps", []agent.Step{step("1", "search", "a"), step("2", "search", "b"), step("3", "search", "c")}, 2, []error{planner.ErrTooManySteps}, "at most 2"},
		{"duplicate id", []agent.Step{step("1", "search", "a"), step("1", "search", "b")}, 8, []error{planner.ErrDuplicateStep}, `"1"`},
		{"empty plan", nil, 8, []error{planner.ErrMalformedPlan}, "no steps"},
		{"step with nothing to do", []agent.Step{{ID: "1"}}, 8, []error{planner.ErrMalformedPlan}, "neither a description nor a tool"},
		{"several problems at once", []agent.Step{step("1", "serch", "x", "9"), step("2", "search", "y", "2")}, 8,
			[]error{planner.ErrUnknownTool, planner.ErrDanglingDependency, planner.ErrPlanCycle}, "serch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := planner.ValidatePlan(tc.steps, registry(t), tc.max)
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
		steps []agent.Step
		rules planner.Rules
	}{
		{"diamond", []agent.Step{{ID: "1", Description: "a", Tool: "search"}, {ID: "2", Description: "b", Tool: "search", DependsOn: []string{"1"}},
			{ID: "3", Description: "c", Tool: "search", DependsOn: []string{"1"}}, {ID: "4", Description: "d", Tool: "calculator", Input: "#E2 + #E3"}}, planner.Rules{MaxSteps: 4}},
		{"tool names differing in case and separators", []agent.Step{{ID: "1", Description: "a", Tool: "Web-Search"}, {ID: "2", Description: "b", Tool: "CALCULATOR"}}, planner.Rules{}},
		{"steps without tools when tools are optional", []agent.Step{{ID: "1", Description: "think"}}, planner.Rules{}},
		{"depends on a finished step", []agent.Step{{ID: "3", Description: "c", Tool: "calculator", Input: "#E1 * 2"}},
			planner.Rules{Known: []agent.Step{{ID: "1", Status: agent.StatusDone}}}},
		{"extra tool name", []agent.Step{{ID: "1", Description: "read", Tool: "LLM"}}, planner.Rules{ExtraTools: []string{"llm"}, RequireTools: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rules := tc.rules
			rules.Tools = registry(t)
			assert.NoError(t, rules.Check(tc.steps))
		})
	}
}

func TestRulesRejectMissingToolsAndReusedIDs(t *testing.T) {
	reg := registry(t)
	err := planner.Rules{Tools: reg, RequireTools: true}.Check([]agent.Step{{ID: "1", Description: "think about it"}})
	require.Error(t, err)
	assert.ErrorIs(t, err, planner.ErrMissingTool)
	assert.Contains(t, err.Error(), "calculator, search, web_search")

	err = planner.Rules{Tools: reg, Known: []agent.Step{{ID: "1"}, {ID: "2"}}}.Check([]agent.Step{{ID: "2", Description: "again", Tool: "search"}})
	require.Error(t, err)
	assert.ErrorIs(t, err, planner.ErrDuplicateStep)
	assert.Contains(t, err.Error(), `number new steps after "2"`)
}

func TestValidatePlanWithoutRegistrySkipsToolCheck(t *testing.T) {
	assert.NoError(t, planner.ValidatePlan([]agent.Step{{ID: "1", Description: "x", Tool: "anything"}}, nil, 0))
}

func TestOrderRunsDependenciesFirstAndKeepsPlanOrderOtherwise(t *testing.T) {
	steps := []agent.Step{
		{ID: "c", Input: "#Ea and #Eb"},
		{ID: "a"},
		{ID: "d", DependsOn: []string{"c"}},
		{ID: "b"},
		{ID: "e"},
	}
	order, err := planner.Order(steps)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, order)

	order, err = planner.Order([]agent.Step{{ID: "1"}, {ID: "2", DependsOn: []string{"1"}}, {ID: "3", Input: "#E2"}, {ID: "4"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "2", "3", "4"}, order)

	_, err = planner.Order([]agent.Step{{ID: "1", DependsOn: []string{"2"}}, {ID: "2", DependsOn: []string{"1"}}})
	assert.ErrorIs(t, err, planner.ErrPlanCycle)
}

func TestReferencesAndReplaceReferences(t *testing.T) {
	assert.Equal(t, []string{"2", "10", "x_1"}, planner.References("#E2 - #E10 + #E2 * #Ex_1"))
	got := planner.ReplaceReferences("#E2 - #E10", func(id string) string { return map[string]string{"2": "1930", "10": "1906"}[id] })
	assert.Equal(t, "1930 - 1906", got)
}

func TestFindJSONSkipsInvalidCandidates(t *testing.T) {
	raws := planner.FindJSON("a {broken [1] then {\"k\": [2]} and ```\n[3]\n```")
	var got []string
	for _, r := range raws {
		got = append(got, string(r))
	}
	assert.Equal(t, []string{"[3]", "[1]", `{"k": [2]}`}, got)
	assert.Empty(t, planner.FindJSON("no json here"))
}

func TestInvalidPlanErrorMatchesBothSentinels(t *testing.T) {
	err := error(&planner.InvalidPlanError{Attempts: 3, Err: errors.Join(planner.ErrPlanCycle, planner.ErrUnknownTool)})
	assert.ErrorIs(t, err, planner.ErrInvalidPlan)
	assert.ErrorIs(t, err, planner.ErrPlanCycle)
	assert.ErrorIs(t, err, planner.ErrUnknownTool)
	assert.NotContains(t, err.Error(), "\n")
	assert.Contains(t, err.Error(), "after 3 attempt(s)")
}
