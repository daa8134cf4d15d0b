package config_test

import (
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/stretchr/testify/assert"
)

func TestEditDistanceCountsOneEditEach(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "abc", 0},
		{"", "abc", 3},
		{"max_iteration", "max_iterations", 1},
		{"reactt", "react", 1},
		{"noisey", "noisy", 1},
		{"questoin", "question", 1}, // a swap of neighbours is one edit
		{"kitten", "sitting", 3},
		{"日本語", "日本", 1}, // runes, not bytes
	} {
		assert.Equal(t, c.want, config.EditDistance(c.a, c.b), "%q → %q", c.a, c.b)
		assert.Equal(t, c.want, config.EditDistance(c.b, c.a), "%q → %q", c.b, c.a)
	}
}

func TestClosestSuggestsOnlyNearNames(t *testing.T) {
	known := []string{"max_iterations", "max_repeats", "mode", "cot", "react", "tot"}
	assert.Equal(t, "max_iterations", config.Closest("max_iteration", known))
	assert.Equal(t, "max_iterations", config.Closest("Max-Iterations", known), "case and dashes are forgiven")
	assert.Equal(t, "react", config.Closest("reactt", known))
	assert.Equal(t, "mode", config.Closest("modr", known))
	assert.Equal(t, "cot", config.Closest("cott", known))
	assert.Empty(t, config.Closest("foo", known), "two edits is too many for a short name")
	assert.Empty(t, config.Closest("completely_different", known))
	assert.Empty(t, config.Closest("react", known), "a known name suggests nothing")
	assert.Empty(t, config.Closest("x", nil))
	assert.Empty(t, config.Closest("c", []string{"a", "b"}), "a name is not all edits")
	assert.Equal(t, "cot", config.Closest("ot", []string{"cot", "tot"}), "first in order on a tie")
}

func TestDidYouMeanStartsTheParenthesis(t *testing.T) {
	assert.Equal(t, `did you mean "openai"? `, config.DidYouMean("opena", []string{"ollama", "openai"}))
	assert.Empty(t, config.DidYouMean("nosuch", []string{"noisy", "perfect"}))
}
