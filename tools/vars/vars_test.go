package vars_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/vars"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func call(t *testing.T, v tools.VarStore, input string) (string, error) {
	t.Helper()
	return vars.New().Call(tools.WithVars(context.Background(), v), input)
}

func TestTextForms(t *testing.T) {
	var v state.Vars
	out, err := call(t, &v, "city = Paris\ncountry = \"France\"")
	require.NoError(t, err)
	assert.Equal(t, "set city = Paris\nset country = France", out)
	assert.Equal(t, map[string]string{"city": "Paris", "country": "France"}, v.All())

	out, err = call(t, &v, "city")
	require.NoError(t, err)
	assert.Equal(t, "city = Paris", out)
	out, err = call(t, &v, "get country")
	require.NoError(t, err)
	assert.Equal(t, "country = France", out)

	out, err = call(t, &v, "list")
	require.NoError(t, err)
	assert.Equal(t, "city = Paris\ncountry = France", out)
	out, err = call(t, &v, "")
	require.NoError(t, err, "an empty input lists")
	assert.Equal(t, "city = Paris\ncountry = France", out)

	out, err = call(t, &v, "delete city\nunset city\nmissing")
	require.NoError(t, err)
	assert.Equal(t, "deleted city\ncity was not set\nmissing is not set (set: country)", out)

	out, err = call(t, &v, "set total = 17 * 23 = 391")
	require.NoError(t, err)
	assert.Equal(t, "set total = 17 * 23 = 391", out, "the first = splits name from value")
	got, _ := v.Get("total")
	assert.Equal(t, "17 * 23 = 391", got)
}

func TestJSONForms(t *testing.T) {
	var v state.Vars
	out, err := call(t, &v, `{"set": {"b": "two", "a": 1, "c": {"x": [1, 2]}}}`)
	require.NoError(t, err)
	assert.Equal(t, "set a = 1\nset b = two\nset c = {\"x\":[1,2]}", out, "names in sorted order; non-strings as JSON")

	out, err = call(t, &v, `{"get": "b"}`)
	require.NoError(t, err)
	assert.Equal(t, "b = two", out)
	out, err = call(t, &v, `{"get": ["a", "zzz"]}`)
	require.NoError(t, err)
	assert.Equal(t, "a = 1\nzzz is not set (set: a, b, c)", out)

	out, err = call(t, &v, `{"set": {"a": null}, "delete": ["c"], "list": true}`)
	require.NoError(t, err)
	assert.Equal(t, "deleted a\ndeleted c\nb = two", out)

	out, err = call(t, &v, `{"op": "set", "name": "d", "value": "four"}`)
	require.NoError(t, err)
	assert.Equal(t, "set d = four", out)
	out, err = call(t, &v, `{"action": "get", "name": "d"}`)
	require.NoError(t, err)
	assert.Equal(t, "d = four", out)
	out, err = call(t, &v, `{"list": true}`)
	require.NoError(t, err)
	assert.Equal(t, "b = two\nd = four", out)

	v2 := state.Vars{}
	out, err = call(t, &v2, `{}`)
	require.NoError(t, err)
	assert.Equal(t, "no vars are set", out)
}

func TestErrorsAreClear(t *testing.T) {
	var v state.Vars
	_, err := vars.New().Call(context.Background(), "a = 1")
	assert.ErrorIs(t, err, vars.ErrNoRun)

	_, err = call(t, &v, "9lives = x")
	assert.ErrorIs(t, err, tools.ErrBadInput)
	assert.ErrorIs(t, err, state.ErrVarName)
	assert.Contains(t, err.Error(), "starts with a letter or _")

	_, err = call(t, &v, `{"sett": {"a": "1"}}`)
	assert.ErrorIs(t, err, tools.ErrBadInput)
	assert.Contains(t, err.Error(), `unknown key "sett"`)

	_, err = call(t, &v, `{"set": ["a"]}`)
	assert.ErrorIs(t, err, tools.ErrBadInput)
	_, err = call(t, &v, `{"get": null}`)
	assert.ErrorContains(t, err, "want a name or a list of names")
	_, err = call(t, &v, `{"delete": [""]}`)
	assert.ErrorContains(t, err, "want a name or a list of names")
	_, err = call(t, &v, `{"op": "rename", "name": "a"}`)
	assert.ErrorContains(t, err, `unknown op "rename"`)
	_, err = call(t, &v, `{"op": "set", "name": "a"}`)
	assert.ErrorContains(t, err, `needs a "value"`)
	_, err = call(t, &v, "what is the city")
	assert.ErrorContains(t, err, `cannot read the line "what is the city"`)

	_, err = call(t, &v, "a = 1\nlong = "+strings.Repeat("x", state.MaxVarValue+1))
	assert.ErrorIs(t, err, state.ErrVarTooLong)
	assert.Contains(t, err.Error(), "done before it: set a = 1", "the commands before the failure are reported")

	_, err = call(t, tools.ReadOnlyVars(&v, "calc"), "b = 2")
	assert.ErrorIs(t, err, tools.ErrVarsReadOnly)
	assert.NotErrorIs(t, err, tools.ErrBadInput, "the input was fine")
	assert.Contains(t, err.Error(), `tool "calc" cannot set var b`)
}

func TestToolIsStatefulWithASchema(t *testing.T) {
	tool := vars.New()
	assert.Equal(t, "vars", tool.Name())
	assert.True(t, tools.MetaOf(tool).Stateful, "a resumed thread must run its calls again")
	assert.False(t, tools.MetaOf(tool).ReadOnly)
	props := tool.Schema()["properties"].(map[string]any)
	assert.Contains(t, props, "set")
	assert.Contains(t, props, "list")
}

func TestParallelCallsSetVarsSafely(t *testing.T) {
	var v state.Vars
	reg, err := tools.NewRegistry([]tools.Tool{vars.New()})
	require.NoError(t, err)
	ctx := tools.WithVars(context.Background(), &v)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := reg.Call(ctx, "vars", fmt.Sprintf(`{"set": {"v%d": "%d"}, "list": true}`, i, i))
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	assert.Equal(t, 16, v.Len())
	assert.Equal(t, uint64(16), v.Version())
	got, _ := v.Get("v7")
	assert.Equal(t, "7", got)
}
