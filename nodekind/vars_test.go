package nodekind_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/vars"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTemplatesReadVarsAndAMissingVarIsEmpty(t *testing.T) {
	tmpl, err := nodekind.Env{}.Template(nodekind.TemplateSpec{Key: "prompt"},
		`city={{.Vars.city}} first={{.Vars.E1}} idx={{index .Vars "step.2"}}{{with .Vars.unset}} never{{end}}`, "", "")
	require.NoError(t, err, "any var name is accepted: vars are set while the run goes on")
	assert.Equal(t, []string{"E1", "city", "step.2", "unset"}, tmpl.Vars())

	st := state.NewState(state.Task{Question: "q"})
	out, err := tmpl.Render(st, nil)
	require.NoError(t, err)
	assert.Equal(t, "city= first= idx=", out, "a var not set renders empty, not <no value> or an error")

	require.NoError(t, st.Vars.Set("city", "Paris"))
	require.NoError(t, st.Vars.Set("E1", "395"))
	require.NoError(t, st.Vars.Set("step.2", "done"))
	out, err = tmpl.Render(st, nil)
	require.NoError(t, err)
	assert.Equal(t, "city=Paris first=395 idx=done", out)

	out, err = tmpl.Render(nil, nil)
	require.NoError(t, err, "without a state every var is empty")
	assert.Equal(t, "city= first= idx=", out)

	parsed, err := nodekind.ParseTemplate("prompt", "[{{.Vars.x}}]")
	require.NoError(t, err)
	out, err = parsed.Render(st, nil)
	require.NoError(t, err, "a template parsed without a declaration treats vars the same")
	assert.Equal(t, "[]", out)
}

func TestTemplateRangeOverVarsListsThemAll(t *testing.T) {
	tmpl, err := nodekind.Env{}.Template(nodekind.TemplateSpec{Key: "prompt"}, `{{range $k, $v := .Vars}}{{$k}}:{{$v}};{{end}}`, "", "")
	require.NoError(t, err)
	st := state.NewState(state.Task{})
	require.NoError(t, st.Vars.Set("b", "2"))
	require.NoError(t, st.Vars.Set("a", "1"))
	out, err := tmpl.Render(st, nil)
	require.NoError(t, err)
	assert.Equal(t, "a:1;b:2;", out)
}

func TestTemplateCheckRefusesVarsNoRunCanSet(t *testing.T) {
	_, err := nodekind.Env{}.Template(nodekind.TemplateSpec{Key: "prompt"}, "{{.Vars.été}}", "", "")
	require.ErrorIs(t, err, config.ErrSettings)
	assert.ErrorIs(t, err, state.ErrVarName)

	_, err = nodekind.Env{}.Template(nodekind.TemplateSpec{Key: "prompt"}, "{{.Vars.city.name}}", "", "")
	require.ErrorIs(t, err, nodekind.ErrUnknownField)
	assert.Contains(t, err.Error(), ".Vars.city has no fields")

	_, err = nodekind.Env{}.Template(nodekind.TemplateSpec{Key: "prompt"}, "{{.Varz.city}}", "", "")
	require.ErrorIs(t, err, nodekind.ErrUnknownField)
	assert.Contains(t, err.Error(), "did you mean .Vars?")
}

// varTool writes a var through tools.VarsFrom; stateful says whether it
// declares Meta.Stateful.
type varTool struct {
	name     string
	stateful bool
}

func (v varTool) Name() string        { return v.name }
func (v varTool) Description() string { return "sets a var" }
func (v varTool) Meta() tools.Meta    { return tools.Meta{Stateful: v.stateful} }
func (v varTool) Call(ctx context.Context, input string) (string, error) {
	store := tools.VarsFrom(ctx)
	if store == nil {
		return "", fmt.Errorf("no vars")
	}
	if err := store.Set(input, "from "+v.name); err != nil {
		return "", err
	}
	return "ok", nil
}

func TestToolCallsGetTheRunsVarsWritableOnlyWhenStateful(t *testing.T) {
	reg, err := tools.NewRegistry([]tools.Tool{varTool{name: "keeper", stateful: true}, varTool{name: "plain"}})
	require.NoError(t, err)
	st := state.NewState(state.Task{})
	meta := llm.CallMeta{Node: "act"}

	res, err := callTool(context.Background(), st, meta, reg, "keeper", "k", nodekind.ToolOptions{})
	require.NoError(t, err)
	require.NoError(t, res.Err)
	got, _ := st.Vars.Get("k")
	assert.Equal(t, "from keeper", got)

	res, err = callTool(context.Background(), st, meta, reg, "plain", "p", nodekind.ToolOptions{})
	require.NoError(t, err)
	assert.ErrorIs(t, res.Err, tools.ErrVarsReadOnly, "its writes would be lost on resume")
	assert.Contains(t, res.Observation, "Stateful")
	_, ok := st.Vars.Get("p")
	assert.False(t, ok)
}

func TestParallelVarsToolCallsAreRaceFree(t *testing.T) {
	reg, err := tools.NewRegistry([]tools.Tool{vars.New()})
	require.NoError(t, err)
	st := withHooks(context.Background(), state.NewState(state.Task{}))
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := nodekind.PrepareTool(reg, llm.CallMeta{Node: "act"}, "vars", fmt.Sprintf("v%d = %d", i, i), nodekind.ToolOptions{})
			res, err := c.Run(context.Background(), st)
			assert.NoError(t, err)
			assert.NoError(t, res.Err)
		}()
	}
	wg.Wait()
	assert.Equal(t, 12, st.Vars.Len())
	assert.Equal(t, 12, st.Usage.Snapshot().ToolCalls)
}

// A journaled thread whose vars tool set vars ends a resumed session with
// the same vars: the replayed calls of the Stateful tool run again, so
// the vars they set are set again, and the resumed run goes on live from
// there.
func TestVarsSetByTheToolSurviveAResume(t *testing.T) {
	s, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "j.db"))
	require.NoError(t, err)
	defer s.Close()
	reg, err := tools.NewRegistry([]tools.Tool{vars.New()})
	require.NoError(t, err)
	meta := llm.CallMeta{Node: "act", Kind: "react"}
	calls := []string{`{"set": {"city": "Paris", "n": "1"}}`, "n = 2", "delete city", "list"}

	// The first session makes the first three calls, then stops.
	first := state.NewState(state.Task{})
	ctx := journaled(t, s)
	for _, in := range calls[:3] {
		res, err := callTool(ctx, first, meta, reg, "vars", in, nodekind.ToolOptions{})
		require.NoError(t, err)
		require.NoError(t, res.Err)
	}
	require.Equal(t, map[string]string{"n": "2"}, first.Vars.All())

	// The resumed session starts from a fresh state, replays the three
	// calls and makes the fourth live.
	resumed := state.NewState(state.Task{})
	ctx = journaled(t, s)
	var last nodekind.ToolResult
	for _, in := range calls {
		last, err = callTool(ctx, resumed, meta, reg, "vars", in, nodekind.ToolOptions{})
		require.NoError(t, err)
		require.NoError(t, last.Err)
	}
	assert.Equal(t, first.Vars.All(), resumed.Vars.All())
	assert.Equal(t, first.Vars.Version(), resumed.Vars.Version(), "the same changes, so the same version")
	assert.Equal(t, "n = 2", last.Observation, "the live call sees the rebuilt vars")
	replayed, live, unused := journal.From(ctx).Stats()
	assert.Equal(t, []int{3, 1, 0}, []int{replayed, live, unused})
}
