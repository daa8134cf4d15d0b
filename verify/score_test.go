package verify

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTokenF1MatchesHotpotQADefinition(t *testing.T) {
	tests := []struct {
		name       string
		pred, gold string
		want       float64
	}{
		{"identical", "Chief of Protocol", "chief of protocol", 1},
		{"articles and punctuation ignored", "The Chief, of Protocol.", "Chief of Protocol", 1},
		{"partial overlap", "Greenwich Village", "Greenwich Village, New York City", 2 * 1 * 0.4 / 1.4},
		{"no overlap", "Paris", "London", 0},
		{"repeated tokens counted once each", "new new york", "new york", 2 * (2.0 / 3) * 1 / (2.0/3 + 1)},
		{"yes versus no", "yes", "no", 0},
		{"yes versus sentence containing yes", "yes", "yes they are", 0},
		{"noanswer special", "noanswer", "no answer", 0},
		{"yes equals yes", "Yes.", "yes", 1},
		{"empty prediction", "", "Paris", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, TokenF1(tt.pred, tt.gold), 1e-12)
		})
	}
}

func TestExactMatchScoresExtractedAnswer(t *testing.T) {
	task := Reference{Question: "Who?", Answer: "Chief of Protocol"}
	tests := []struct {
		name    string
		pred    string
		correct bool
		f1      float64
	}{
		{"raw model text with answer line", "Thought: found it.\nFinal Answer: the chief of protocol.", true, 1},
		{"ReAct finish", "Action 3: Finish[Chief of Protocol]", true, 1},
		{"partial", "Answer: Protocol", false, 2 * 1 * (1.0 / 3) / (1 + 1.0/3)},
		{"wrong", "Answer: ambassador", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ExactMatch{}.Score(tt.pred, task)
			assert.Equal(t, tt.correct, r.Correct)
			assert.InDelta(t, tt.f1, r.F1, 1e-12)
			assert.True(t, r.HasF1)
			assert.False(t, r.Unscorable)
			if tt.correct {
				assert.Equal(t, 1.0, r.EM)
			} else {
				assert.Zero(t, r.EM)
			}
			assert.NotEmpty(t, r.Detail)
		})
	}
}

func TestScorersMarkTasksWithoutReferenceUnscorable(t *testing.T) {
	task := Reference{Question: "q"}
	for name, s := range map[string]Scorer{
		"em": ExactMatch{}, "contains": Contains{}, "numeric": Numeric{},
		"choice": Choice{Labels: []string{"yes", "no"}}, "game24": Game24{},
	} {
		r := s.Score("Answer: 24", task)
		assert.True(t, r.Unscorable, name)
		assert.False(t, r.Correct, name)
		assert.NotEmpty(t, r.Detail, name)
	}
}

func TestContainsAcceptsReferenceInsideAnswer(t *testing.T) {
	task := Reference{Answer: "New York City"}
	tests := []struct {
		pred    string
		correct bool
		em      float64
	}{
		{"Answer: Greenwich Village, New York City", true, 0},
		{"Answer: new york city", true, 1},
		{"Answer: New York", false, 0},
		{"Answer: New Yorkshire City", false, 0},
		{"New York City is mentioned here.\nAnswer: Boston", false, 0},
	}
	for _, tt := range tests {
		r := Contains{}.Score(tt.pred, task)
		assert.Equal(t, tt.correct, r.Correct, tt.pred)
		assert.Equal(t, tt.em, r.EM, tt.pred)
		assert.True(t, r.HasF1, tt.pred)
	}
}

func TestNumericComparesWithTolerance(t *testing.T) {
	tests := []struct {
		name    string
		scorer  Numeric
		pred    string
		gold    string
		correct bool
	}{
		{"same integer", Numeric{}, "#### 18", "18", true},
		{"dollar and decimal", Numeric{}, "She makes $18.00 a day.\nAnswer: $18.00", "18", true},
		{"thousands separator in gold", Numeric{}, "Answer: 2125", "2,125", true},
		{"within default relative tolerance", Numeric{}, "Answer: 1000000.5", "1000000", true},
		{"outside default tolerance", Numeric{}, "Answer: 18.01", "18", false},
		{"absolute floor near zero", Numeric{}, "Answer: 0.0000001", "0", true},
		{"fraction equals decimal", Numeric{}, "Answer: 3/4", "0.75", true},
		{"negative", Numeric{}, "Answer: -3.5", "-3.5", true},
		{"sign matters", Numeric{}, "Answer: 3.5", "-3.5", false},
		{"wider tolerance", Numeric{Tolerance: 0.01}, "Answer: 18.1", "18", true},
		{"exact when negative tolerance", Numeric{Tolerance: -1}, "Answer: 1000000.5", "1000000", false},
		{"no number in answer", Numeric{}, "Answer: eighteen", "18", false},
		{"percent", Numeric{}, "Answer: 50%", "50", true},
		{"chinese", Numeric{}, "所以答案是18元。", "18", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.scorer.Score(tt.pred, Reference{Answer: tt.gold})
			assert.Equal(t, tt.correct, r.Correct, r.Detail)
			assert.False(t, r.HasF1)
			assert.False(t, r.Unscorable)
		})
	}
	r := Numeric{}.Score("Answer: 5", Reference{Answer: "Paris"})
	assert.True(t, r.Unscorable)
}

func TestGame24ReadsPuzzleFromQuestion(t *testing.T) {
	task := Reference{Question: "Use 4 5 6 10 and + - * / to obtain 24."}
	tests := []struct {
		pred    string
		correct bool
	}{
		{"Steps:\n10 - 4 = 6 (left: 5 6 6)\n5 * 6 = 30 (left: 6 30)\n30 - 6 = 24 (left: 24)\nAnswer: (10 - 4) * 5 - 6 = 24", true},
		{"Answer: 4 * 6 = 24", false},
		{"Answer: 4 + 5 + 6 + 10 = 25", false},
		{"I cannot solve this.", false},
	}
	for _, tt := range tests {
		r := Game24{}.Score(tt.pred, task)
		assert.Equal(t, tt.correct, r.Correct, "%s: %s", tt.pred, r.Detail)
		assert.False(t, r.Unscorable)
	}
	r := Game24{}.Score("Answer: 24", Reference{Question: "Make 24."})
	assert.True(t, r.Unscorable)
}

func TestChoicePicksTheMentionedLabel(t *testing.T) {
	fever := Choice{Labels: []string{"SUPPORTS", "REFUTES", "NOT ENOUGH INFO"}}
	tests := []struct {
		name    string
		pred    string
		gold    string
		correct bool
	}{
		{"exact label", "Finish[SUPPORTS]", "SUPPORTS", true},
		{"case-insensitive", "Answer: refutes", "REFUTES", true},
		{"label in a sentence", "Answer: The claim REFUTES it.", "REFUTES", true},
		{"longer label not read as shorter", "Finish[NOT ENOUGH INFO]", "NOT ENOUGH INFO", true},
		{"wrong label", "Finish[SUPPORTS]", "REFUTES", false},
		{"two labels are ambiguous", "Answer: SUPPORTS or REFUTES", "SUPPORTS", false},
		{"no label", "Answer: maybe", "SUPPORTS", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fever.Score(tt.pred, Reference{Answer: tt.gold})
			assert.Equal(t, tt.correct, r.Correct, r.Detail)
			assert.False(t, r.Unscorable)
		})
	}
	yesNo := Choice{Labels: []string{"yes", "no"}}
	assert.True(t, yesNo.Score("Answer: No.", Reference{Answer: "no"}).Correct)
	assert.True(t, yesNo.Score("Answer: maybe", Reference{Answer: "unknown"}).Unscorable)
}

func TestByNameBuildsScorers(t *testing.T) {
	tests := []struct {
		name string
		want Scorer
	}{
		{"em", ExactMatch{}},
		{"EM", ExactMatch{}},
		{"contains", Contains{}},
		{"numeric", Numeric{}},
		{"numeric:0.01", Numeric{Tolerance: 0.01}},
		{"numeric:0", Numeric{Tolerance: -1}},
		{"game24", Game24{}},
		{"sorting", Sorting{}},
		{"Sorting", Sorting{}},
		{"choice:SUPPORTS|REFUTES|NOT ENOUGH INFO", Choice{Labels: []string{"SUPPORTS", "REFUTES", "NOT ENOUGH INFO"}}},
		{" choice: yes | no ", Choice{Labels: []string{"yes", "no"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ByName(tt.name)
			require.NoError(t, err)
			assert.Equal(t, tt.want, s)
		})
	}
}

func TestByNameRejectsUnknownNames(t *testing.T) {
	for _, name := range []string{"", "f1", "em:x", "numeric:abc", "numeric:-1", "choice", "choice:", "choice:only", "game24:5", "sorting:32"} {
		_, err := ByName(name)
		assert.ErrorIs(t, err, ErrUnknownScorer, name)
	}
}

func TestSummarizeAveragesScoredResults(t *testing.T) {
	results := []Result{
		{Correct: true, EM: 1, F1: 1, HasF1: true},
		{Correct: false, EM: 0, F1: 0.5, HasF1: true},
		{Correct: true, EM: 1},
		{Unscorable: true},
	}
	s := Summarize(results)
	assert.Equal(t, 4, s.Tasks)
	assert.Equal(t, 3, s.Scored)
	assert.Equal(t, 2, s.Correct)
	assert.InDelta(t, 2.0/3, s.Accuracy, 1e-12)
	assert.InDelta(t, 2.0/3, s.EM, 1e-12)
	assert.Equal(t, 2, s.WithF1)
	assert.InDelta(t, 0.75, s.F1, 1e-12)

	empty := Summarize(nil)
	assert.Zero(t, empty.Accuracy)
	assert.False(t, math.IsNaN(empty.F1) || math.IsNaN(empty.EM))
}

func TestExactMatchJudgesAGame24ReferenceAsAPuzzle(t *testing.T) {
	ref := Reference{Question: "Use 1 1 4 6 and + - * / to obtain 24, using each number exactly once.", Answer: "1 * 1 * 4 * 6"}
	// Normalisation drops the operators: these two would be "equal".
	require.True(t, NormalizedEqual("1 * 1 + 4 * 6", ref.Answer))
	assert.False(t, ExactMatch{}.Score("Answer: 1 * 1 + 4 * 6", ref).Correct, "25 is not 24")
	r := ExactMatch{}.Score("Answer: (1 + 1) * (6 + 4) + 4", ref)
	assert.False(t, r.Correct, "uses a number twice")
	r = ExactMatch{}.Score("Answer: 4 * 6 / 1 / 1", ref)
	assert.True(t, r.Correct, r.Detail)
	assert.Equal(t, 1.0, r.F1)
	// A reference that is no solution (or no expression) keeps exact match.
	plain := Reference{Question: "What is 2 * 3 * 4 * 1?", Answer: "24"}
	assert.True(t, ExactMatch{}.Score("Answer: 24", plain).Correct)
	assert.False(t, ExactMatch{}.Score("Answer: 2 * 3 * 4 * 1", plain).Correct)
}
