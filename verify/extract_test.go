package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFindAppliesRulesInPriorityOrder(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string
		src  Source
	}{
		{"answer line", "Let me think.\nAnswer: 18", "18", SourceAnswerLine},
		{"final answer line", "Thought: done\nFinal Answer: Paris.", "Paris", SourceAnswerLine},
		{"last answer line wins", "Answer: 12\nwait, recheck\nAnswer: 18", "18", SourceAnswerLine},
		{"answer line case-insensitive full-width colon", "final answer：18", "18", SourceAnswerLine},
		{"markdown bold label", "**Final Answer:** 42", "42", SourceAnswerLine},
		{"markdown bold label outside colon", "**Answer**: 42", "42", SourceAnswerLine},
		{"bold answer value", "Answer: **Chief of Protocol**", "Chief of Protocol", SourceAnswerLine},
		{"answer on next line", "Final Answer:\n\n  yes\n", "yes", SourceAnswerLine},
		{"answer line beats answer is", "The answer is 12.\nAnswer: 18", "18", SourceAnswerLine},
		{"answer line beats hashes", "#### 12\nAnswer: 18", "18", SourceAnswerLine},
		{"chinese colon", "所以答案：18", "18", SourceChinese},
		{"chinese shi", "计算得出答案是18。", "18", SourceChinese},
		{"chinese wei with sentence after", "答案为 18元。因为每天卖9个", "18元", SourceChinese},
		{"chinese final answer", "步骤一……\n最终答案：72", "72", SourceChinese},
		{"chinese last wins", "初步答案是12。最终答案是18。", "18", SourceChinese},
		{"gsm8k hashes", "She makes 9 * 2 = $18.\n#### 18", "18", SourceHashes},
		{"hashes with comma number", "#### 1,234", "1,234", SourceHashes},
		{"markdown heading is not hashes", "#### Step 1\nThe answer is 7.", "7", SourceAnswerIs},
		{"boxed", `So the total is $\boxed{18}$.`, "18", SourceBoxed},
		{"boxed nested braces", `\boxed{\frac{3}{4}}`, `\frac{3}{4}`, SourceBoxed},
		{"boxed text wrapper", `\boxed{\text{Paris}}`, "Paris", SourceBoxed},
		{"last boxed wins", `\boxed{1} then \boxed{2}`, "2", SourceBoxed},
		{"answer is sentence", "So, the answer is 18. That is all.", "18", SourceAnswerIs},
		{"answer is with colon", "Therefore the answer is: 18", "18", SourceAnswerIs},
		{"answer is keeps decimal", "The answer is 3.5. Done.", "3.5", SourceAnswerIs},
		{"answer is quoted", `The final answer is "Greenwich Village".`, "Greenwich Village", SourceAnswerIs},
		{"finish", "Thought 3: I know it.\nAction 3: Finish[yes]", "yes", SourceFinish},
		{"finish nested brackets", "Finish[a [b] c]", "a [b] c", SourceFinish},
		{"last line fallback", "Some reasoning.\n\n  Paris.  \n\n", "Paris", SourceLastLine},
		{"single word", "18", "18", SourceLastLine},
		{"last line quotes and backticks", "`'Animorphs'`", "Animorphs", SourceLastLine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := Find(tt.text)
			require.True(t, ok)
			assert.Equal(t, tt.want, m.Answer)
			assert.Equal(t, tt.src, m.Source, "source %s", m.Source)
		})
	}
}

func TestExtractReportsNothingForBlankText(t *testing.T) {
	for _, text := range []string{"", "   ", "\n\t\n", `""`, "**"} {
		ans, ok := Extract(text)
		assert.False(t, ok, "%q", text)
		assert.Empty(t, ans, "%q", text)
	}
}

func TestExtractSkipsEmptyMarkersForEarlierOnes(t *testing.T) {
	ans, ok := Extract("Answer: 18\nAnswer:")
	require.True(t, ok)
	assert.Equal(t, "18", ans)
}

func TestMatchExplicitDistinguishesFallback(t *testing.T) {
	m, ok := Find("Answer: 3")
	require.True(t, ok)
	assert.True(t, m.Explicit())
	m, ok = Find("just 3")
	require.True(t, ok)
	assert.False(t, m.Explicit())
	assert.Equal(t, "last-line", m.Source.String())
}

func TestSourceStringNamesEveryRule(t *testing.T) {
	seen := map[string]bool{}
	for s := SourceNone; s <= SourceLastLine; s++ {
		name := s.String()
		assert.False(t, seen[name], "duplicate name %q", name)
		seen[name] = true
	}
	assert.Equal(t, "none", Source(99).String())
}

func BenchmarkExtractReActTrace(b *testing.B) {
	text := "Thought 1: I need to search the film.\nAction 1: Search[Kiss and Tell]\nObservation 1: Kiss and Tell is a 1945 film.\n" +
		"Thought 2: Shirley Temple played Corliss Archer.\nAction 2: Finish[Chief of Protocol]"
	for b.Loop() {
		Extract(text)
	}
}
