package state_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVarsSetGetDeleteAndVersion(t *testing.T) {
	var v state.Vars
	assert.Zero(t, v.Version())
	assert.True(t, v.IsZero())
	_, ok := v.Get("city")
	assert.False(t, ok)

	require.NoError(t, v.Set("city", "Paris"))
	got, ok := v.Get("city")
	assert.True(t, ok)
	assert.Equal(t, "Paris", got)
	assert.Equal(t, uint64(1), v.Version())

	require.NoError(t, v.Set("city", "Paris"), "the same value again")
	assert.Equal(t, uint64(1), v.Version(), "setting the same value is not a change")
	require.NoError(t, v.Set("city", "Lyon"))
	assert.Equal(t, uint64(2), v.Version())

	require.NoError(t, v.Delete("nothing"))
	assert.Equal(t, uint64(2), v.Version(), "deleting a missing var is not a change")
	require.NoError(t, v.Delete("city"))
	assert.Equal(t, uint64(3), v.Version())
	assert.Zero(t, v.Len())
	assert.ErrorIs(t, v.Delete("1bad"), state.ErrVarName)
}

func TestVarsRefuseBadNamesAndValuesAndTooMany(t *testing.T) {
	var v state.Vars
	for _, bad := range []string{"", "1x", ".x", "a-b", "a b", "é", strings.Repeat("a", state.MaxVarName+1)} {
		err := v.Set(bad, "x")
		assert.ErrorIs(t, err, state.ErrVarName, "%q", bad)
		assert.False(t, state.ValidVarName(bad), bad)
	}
	for _, good := range []string{"a", "_", "E1", "step.2", "a_b.c9", strings.Repeat("a", state.MaxVarName)} {
		assert.NoError(t, state.CheckVarName(good), good)
	}

	err := v.Set("long", strings.Repeat("é", state.MaxVarValue+1))
	assert.ErrorIs(t, err, state.ErrVarTooLong)
	assert.Contains(t, err.Error(), "at most 4000")
	require.NoError(t, v.Set("long", strings.Repeat("é", state.MaxVarValue)), "the limit counts characters, not bytes")

	require.NoError(t, v.SetClipped("clipped", strings.Repeat("x", state.MaxVarValue+10)))
	c, _ := v.Get("clipped")
	assert.Equal(t, state.MaxVarValue, len([]rune(c)))
	assert.True(t, strings.HasSuffix(c, "…"))

	for i := v.Len(); i < state.MaxVars; i++ {
		require.NoError(t, v.Set(fmt.Sprintf("v%d", i), "x"))
	}
	err = v.Set("one_more", "x")
	assert.ErrorIs(t, err, state.ErrTooManyVars)
	assert.Contains(t, err.Error(), "delete one first")
	require.NoError(t, v.Set("v10", "changed"), "an existing var can still change at the limit")
	assert.Equal(t, state.MaxVars, v.Len())
}

func TestVarsBlockIsSortedNaturallyAndClipped(t *testing.T) {
	var v state.Vars
	assert.Empty(t, v.Block(0))
	require.NoError(t, v.Set("E10", "ten"))
	require.NoError(t, v.Set("E2", "two\nlines   here"))
	require.NoError(t, v.Set("city", "Paris, the capital of France"))
	require.NoError(t, v.Set("E1", "one"))
	assert.Equal(t, []string{"E1", "E2", "E10", "city"}, v.Names())
	assert.Equal(t, "E1 = one\nE2 = two lines here\nE10 = ten\ncity = Paris, the capital of France\n", v.Block(0))
	assert.Equal(t, "E1 = one\nE2 = two lines…\nE10 = ten\ncity = Paris, th…\n", v.Block(9))
}

func TestVarsChangedSinceAVersion(t *testing.T) {
	var v state.Vars
	block, ver, changed := v.Changed(0, 0)
	assert.False(t, changed)
	assert.Empty(t, block)
	assert.Zero(t, ver)

	require.NoError(t, v.Set("a", "1"))
	block, ver, changed = v.Changed(ver, 0)
	assert.True(t, changed)
	assert.Equal(t, "a = 1\n", block)

	_, again, changed := v.Changed(ver, 0)
	assert.False(t, changed, "nothing changed since the version shown")
	assert.Equal(t, ver, again)

	require.NoError(t, v.Delete("a"))
	block, _, changed = v.Changed(ver, 0)
	assert.True(t, changed, "a deletion is a change")
	assert.Empty(t, block)
}

func TestStateVarsRoundTripAsAPlainObject(t *testing.T) {
	st := state.NewState(state.Task{Question: "q"})
	b, err := json.Marshal(st)
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"vars"`, "no vars, no key")

	require.NoError(t, st.Vars.Set("E1", "395"))
	require.NoError(t, st.Vars.Set("city", "Paris"))
	b, err = json.Marshal(st)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"vars":{"E1":"395","city":"Paris"}`)

	var back state.State
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, st.Vars.All(), back.Vars.All())
	assert.Equal(t, "E1 = 395\ncity = Paris\n", back.Vars.Block(0))

	var bad state.State
	assert.ErrorIs(t, json.Unmarshal([]byte(`{"vars":{"9lives":"x"}}`), &bad), state.ErrVarName)
	assert.Error(t, json.Unmarshal([]byte(`{"vars":{"a":1}}`), &bad), "values are strings")
}

func TestVarsAreSafeForConcurrentUse(t *testing.T) {
	var v state.Vars
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("w%d", i%8)
			for j := range 20 {
				assert.NoError(t, v.Set(name, fmt.Sprint(j)))
				_ = v.Block(10)
				_, _, _ = v.Changed(uint64(j), 5)
				_ = v.All()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 8, v.Len())
	for _, n := range v.Names() {
		val, _ := v.Get(n)
		assert.Equal(t, "19", val, "every writer ends with its last value")
	}
}

func TestStepVarNamesStepIDs(t *testing.T) {
	for id, want := range map[string]string{
		"1":       "E1",
		"#E1":     "E1",
		"E2":      "E2",
		"search":  "search",
		"step-3":  "step_3",
		" 12 ":    "E12",
		"#3":      "E3",
		"":        "",
		"-":       "",
		"a.b":     "a.b",
		"schritt": "schritt",
	} {
		assert.Equal(t, want, state.StepVar(id), "%q", id)
	}
}
