package redact_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/planner-engine/planner/redact"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type label string

type step struct {
	ID     int
	Input  string
	Result label
	Tags   []string
	Next   *step
	Extra  any
	Nums   []int
	Raw    []byte
	hidden string
}

func TestWalkScrubsNestedValuesWithoutModifyingThem(t *testing.T) {
	s := redact.New(redact.WithEnviron([]string{"OPENAI_API_KEY=" + testKey}))
	leak := "echo " + testKey
	steps := []step{
		{ID: 1, Input: "clean"},
		{ID: 2, Input: leak, Result: label(leak), Tags: []string{"a", leak}, Next: &step{Input: leak},
			Extra: map[string]string{"k": leak}, Nums: []int{1}, Raw: []byte("raw"), hidden: leak},
	}
	data := map[string]any{
		"text": leak, "n": 3, "ok": true, "nil": nil, "steps": steps, "when": time.Unix(0, 0).UTC(),
		"list": []any{leak, 1.5, map[string]any{"deep": []string{leak}}},
		"arr":  [2]string{"x", leak}, "ptr": &steps[1],
	}
	before, err := json.Marshal(data)
	require.NoError(t, err)

	out := redact.Walk(data, s)

	after, err := json.Marshal(data)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the input is not modified")
	assert.Equal(t, "clean", steps[0].Input)
	assert.Equal(t, leak, steps[1].Next.Input)

	js, err := json.Marshal(out)
	require.NoError(t, err)
	assert.NotContains(t, string(js), testKey)
	assert.Contains(t, string(js), "echo [REDACTED:OPENAI_API_KEY]")

	gotSteps, ok := out["steps"].([]step)
	require.True(t, ok, "types are preserved: %T", out["steps"])
	assert.Equal(t, "clean", gotSteps[0].Input)
	assert.Equal(t, label("echo [REDACTED:OPENAI_API_KEY]"), gotSteps[1].Result)
	assert.Equal(t, map[string]string{"k": "echo [REDACTED:OPENAI_API_KEY]"}, gotSteps[1].Extra)
	assert.Equal(t, leak, gotSteps[1].hidden, "unexported fields are not reached")
	assert.Equal(t, [2]string{"x", "echo [REDACTED:OPENAI_API_KEY]"}, out["arr"])
	assert.Equal(t, 3, out["n"])
	assert.Equal(t, time.Unix(0, 0).UTC(), out["when"])
}

func TestWalkReturnsCleanValuesAsTheyAre(t *testing.T) {
	s := redact.New(redact.WithEnviron([]string{"OPENAI_API_KEY=" + testKey}))
	steps := []step{{ID: 1, Input: "clean", Tags: []string{"a"}}}
	data := map[string]any{"text": "fine", "steps": steps, "list": []any{"x", 2}}
	out := redact.Walk(data, s)
	out["added"] = true
	assert.Contains(t, data, "added", "a clean map is returned itself, not copied")
	allocs := testing.AllocsPerRun(50, func() { _ = redact.Walk(data, s) })
	assert.Zero(t, allocs)
	assert.Nil(t, redact.Walk[any](nil, s))
	var nilScrubber redact.StringScrubber
	assert.Equal(t, map[string]any{"k": testKey}, redact.Walk(map[string]any{"k": testKey}, nilScrubber))
}

func TestWalkStopsOnCycles(t *testing.T) {
	type node struct {
		Name string
		Next *node
	}
	n := &node{Name: "echo " + testKey}
	n.Next = n
	out := redact.Walk(n, redact.New(redact.WithEnviron(nil)))
	assert.Equal(t, "echo [REDACTED]", out.Name)
}

func TestAnyScrubsAStruct(t *testing.T) {
	type output struct {
		Answer string   `json:"answer"`
		Steps  []string `json:"steps"`
		Calls  int      `json:"calls"`
	}
	s := redact.New(redact.WithEnviron([]string{"X_TOKEN=" + testKey}))
	got := redact.Walk(output{Answer: testKey, Steps: []string{"ok", "b " + testKey}, Calls: 2}, s)
	assert.Equal(t, output{Answer: "[REDACTED:X_TOKEN]", Steps: []string{"ok", "b [REDACTED:X_TOKEN]"}, Calls: 2}, got)
	assert.Equal(t, output{Answer: "[REDACTED:X_TOKEN]"}, redact.Walk(output{Answer: testKey}, s))
}
