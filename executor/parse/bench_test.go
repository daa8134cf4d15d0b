package parse

import (
	"strings"
	"testing"
)

// benchReplies are typical model replies, from short to long.
var benchReplies = []struct{ name, text string }{
	{"react_action", "Thought: I need the population of Kyoto to compare it.\nAction: search\nAction Input: Kyoto population 2020"},
	{"react_final", "Thought: Both numbers are known now, so Kyoto is larger.\nFinal Answer: Kyoto"},
	{"paper_action", "Thought 2: The paragraph does not say who Milhouse is named after, maybe I can look up \"named after\".\nAction 2: Lookup[named after]"},
	{"fenced_json", "Thought: call the API\nAction: http_get\nAction Input: " + fence + "json\n{\n  \"url\": \"https://example.org/items?page=2\",\n  \"headers\": {\"Accept\": \"application/json\"}\n}\n" + fence},
	{"invented_observation", "Thought: search first\nAction: search\nAction Input: NBA founding year\nObservation: The NBA was founded in 1946 in New York.\nThought: I know it\nFinal Answer: 1946"},
	{"long_thought", "Thought: " + strings.Repeat("The first source lists several candidates, and each needs checking against the second source. ", 40) + "\nAction: search\nAction Input: second source"},
}

func BenchmarkParse(b *testing.B) {
	for _, r := range benchReplies {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(r.text)))
			for b.Loop() {
				Parse(r.text)
			}
		})
	}
}

func BenchmarkCutObservation(b *testing.B) {
	text := benchReplies[len(benchReplies)-1].text
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		CutObservation(text)
	}
}

// BenchmarkParse_Adversarial measures replies built to make a careless
// parser slow; time per byte must stay flat as they grow.
func BenchmarkParse_Adversarial(b *testing.B) {
	cases := []struct{ name, text string }{
		{"many_calls_on_one_line", "Action: " + strings.Repeat("Search[x], ", 20000)},
		{"many_bare_calls_on_one_line", strings.Repeat("Search[x] ", 20000)},
		{"unclosed_brackets", "Action: Search" + strings.Repeat("[", 100000)},
		{"many_labels", strings.Repeat("Thought: a\nAction: b\nAction Input: c\n", 5000)},
		{"emphasis_tool", "Action: " + strings.Repeat("*", 100000)},
		{"long_json", "Action: a\nAction Input: {\"k\": \"" + strings.Repeat("\\\"", 50000) + "\"}"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				Parse(c.text)
			}
		})
	}
}
