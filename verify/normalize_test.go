package verify

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalizeFoldsLikeHotpotQA(t *testing.T) {
	tests := []struct{ in, want string }{
		{"The Eiffel Tower", "eiffel tower"},
		{"  Greenwich   Village, New York City. ", "greenwich village new york city"},
		{"an apple a day", "apple day"},
		{"Theatre", "theatre"},
		{"U.S.A.", "usa"},
		{"don't", "dont"},
		{"“Quoted” — text…", "quoted text"},
		{"$1,234", "1234"},
		{"答案，是。", "答案是"},
		{"A", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, Normalize(tt.in))
		})
	}
}

func TestTokensSplitsNormalizedText(t *testing.T) {
	assert.Equal(t, []string{"chief", "of", "protocol"}, Tokens("The Chief of Protocol!"))
	assert.Empty(t, Tokens("the a an"))
}

func TestNumberReadsAnswerForms(t *testing.T) {
	tests := []struct {
		in   string
		want string // big.Rat string a/b
	}{
		{"18", "18/1"},
		{"$18", "18/1"},
		{"18.0", "18/1"},
		{"18 dollars", "18/1"},
		{"1,234", "1234/1"},
		{"1,234,567.5", "2469135/2"},
		{"-3.5", "-7/2"},
		{"−3.5", "-7/2"},
		{"$-5", "-5/1"},
		{"50%", "50/1"},
		{"3/4", "3/4"},
		{"3 / 4 cup", "3/4"},
		{".5", "1/2"},
		{"１８元", "18/1"},
		{"18元", "18/1"},
		{"9 * 2 = 18", "18/1"},
		{"10-3", "3/1"},
		{"x-3", "3/1"},
		{"(-3)", "-3/1"},
		{"about 12 apples and 7 pears", "7/1"},
		{"1/0 or 5", "5/1"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := Number(tt.in)
			require.True(t, ok)
			want, ok := new(big.Rat).SetString(tt.want)
			require.True(t, ok)
			assert.Zero(t, want.Cmp(got), "got %s", got.RatString())
		})
	}
}

func TestNumberFailsWithoutDigits(t *testing.T) {
	for _, in := range []string{"", "eighteen", "no number here", "-", "1/0"} {
		_, ok := Number(in)
		assert.False(t, ok, "%q", in)
	}
}
