package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// streamPlans are replies in every format Parse reads.
var streamPlans = map[string]string{
	"json object": `{"steps": [
  {"id": 1, "description": "Find the year", "tool": "search", "input": "Galileo birth year", "depends_on": []},
  {"id": "2", "description": "Add {braces} and \"quotes\" and ]", "tool": "calculator", "input": {"expression": "#E1 + 10"}},
  {"description": "no id", "tool": "llm", "input": "Combine #E1 and #E2", "deps": "1, step 2"}
]}`,
	"fenced json with prose": "Here is my plan.\n```json\n{\"plan\": [{\"id\": \"a\", \"tool\": \"search\", \"input\": \"x\"}, {\"id\": \"b\", \"tool\": \"search\", \"input\": \"#Ea\"}]}\n```\nDone.",
	"bare array":             `[{"id": "1", "tool": "search", "input": "q"}, {"id": "2", "tool": "calculator", "input": "2*#E1", "depends_on": ["E1"]}]`,
	"rewoo":                  "Plan: find the population\n#E1 = Search[population of Paris]\nPlan: double it\n#E2 = Calculator[2 * #E1]\n",
	"numbered":               "1. search[capital of France]\n2. calculator[3 + 4]\n3. Write the answer",
	"key order":              `{"note": "steps: [ignored]", "tasks": [{"idx": 1, "tool": "search", "args": ["a", 1]}]}`,
}

func TestStreamReadsEveryChunkingAsParseReadsTheWhole(t *testing.T) {
	for name, text := range streamPlans {
		want, err := Parse(text)
		require.NoError(t, err, name)
		for size := 1; size <= 9; size++ {
			s := NewStream()
			var got []Step
			for i := 0; i < len(text); i += size {
				got = append(got, s.Write(text[i:min(i+size, len(text))])...)
			}
			got = append(got, s.Close()...)
			require.Equal(t, want, got, "%s, chunks of %d bytes", name, size)
			require.Equal(t, text, s.Text())
		}
	}
}

func TestStreamReturnsEachStepWhenItsTextIsComplete(t *testing.T) {
	s := NewStream()
	require.Empty(t, s.Write(`{"steps": [{"id": "1", "tool": "search", "input": "a`))
	got := s.Write(`"},`)
	require.Len(t, got, 1, "the first step is complete at its closing brace")
	require.Equal(t, "a", got[0].Input)
	require.Empty(t, s.Write(` {"id": "2", "tool": "calc", "input": "#E1 * 2"`))
	got = s.Write("}\n")
	require.Len(t, got, 1)
	require.Equal(t, []string{"1"}, got[0].DependsOn, "#E references become dependencies at once")

	lines := NewStream()
	require.Empty(t, lines.Write("1. search[Paris"))
	require.Len(t, lines.Write("]\n2. calc"), 1, "a numbered step is complete at its line feed")
	require.Len(t, lines.Close(), 1, "Close reads the last line")
}

func TestStreamIgnoresWhatIsNotAPlan(t *testing.T) {
	for _, text := range []string{
		"I cannot plan this.",
		`{"answer": "42", "list": [{"id": 1}]}`,
		"[1] a bracketed label\n",
	} {
		s := NewStream()
		for _, r := range text {
			require.Empty(t, s.Write(string(r)), text)
		}
		require.Empty(t, s.Close(), text)
	}
}

func TestSameComparesWhatRunsAStep(t *testing.T) {
	a := Step{ID: "1", Description: "x", Tool: "search", Input: "q", DependsOn: []string{"0"}}
	b := a
	b.Description = "other words"
	require.True(t, Same(a, b))
	b.DependsOn = []string{"2"}
	require.False(t, Same(a, b))
	b = a
	b.Input = strings.ToUpper(a.Input)
	require.False(t, Same(a, b))
}
