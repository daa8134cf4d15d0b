package calc

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/tools"
)

func TestToolDescribesItself(t *testing.T) {
	tool := New()
	assert.Equal(t, "calculator", tool.Name())
	assert.Contains(t, tool.Description(), "Example input:")
	assert.Contains(t, tool.Description(), "12 decimal places")
	assert.True(t, tool.Meta().ReadOnly)
	assert.False(t, tool.Meta().Network)

	schema, err := json.Marshal(tool.Schema())
	require.NoError(t, err)
	var decoded struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type        string `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	require.NoError(t, json.Unmarshal(schema, &decoded))
	assert.Equal(t, "object", decoded.Type)
	assert.Equal(t, "string", decoded.Properties["expression"].Type)
	assert.NotEmpty(t, decoded.Properties["expression"].Description)
	assert.Equal(t, []string{"expression"}, decoded.Required)
}

func TestToolCallAcceptsTextAndJSONArguments(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"plain expression", "(3 + 4) * 2", "14"},
		{"quoted expression with trailing equals", "`1/4 + 1/4 =`", "0.5"},
		{"native tool call arguments", `{"expression": "2^10"}`, "1024"},
		{"input key", `{"input": "7*6"}`, "42"},
		{"expr key", `{"expr": "1+1"}`, "2"},
		{"single unknown key", `{"query": "3*3"}`, "9"},
		{"expression key wins", `{"input": "1", "expression": "2"}`, "2"},
		{"number instead of a string", `{"expression": 12.5}`, "12.5"},
		{"surrounding white space", "  {\"expression\": \"1/3\"}\n", "0.333333333333"},
	}
	tool := New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tool.Call(context.Background(), tc.input)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestToolCallWrapsBadInput(t *testing.T) {
	tests := []struct {
		name, input string
		kind        error
	}{
		{"syntax error", "2 +", ErrSyntax},
		{"division by zero", "1/0", ErrDivByZero},
		{"domain error", "sqrt(-4)", ErrDomain},
		{"too large", "9^9^9", ErrTooLarge},
		{"unknown name", "foo(1)", ErrUnknownName},
		{"argument count", "sqrt()", ErrArgCount},
		{"malformed JSON", `{"expression": `, ErrSyntax},
		{"JSON without an expression", `{"a": "1", "b": "2"}`, ErrSyntax},
		{"JSON expression of the wrong type", `{"expression": [1]}`, ErrSyntax},
	}
	tool := New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tool.Call(context.Background(), tc.input)
			require.Error(t, err)
			assert.ErrorIs(t, err, tools.ErrBadInput)
			assert.ErrorIs(t, err, tc.kind)
		})
	}
}

func TestToolCallAppliesItsOptions(t *testing.T) {
	got, err := New(WithPrecision(3)).Call(context.Background(), "2/3")
	require.NoError(t, err)
	assert.Equal(t, "0.667", got)
	assert.Contains(t, New(WithPrecision(3)).Description(), "3 decimal places")

	_, err = New(WithMaxBits(8)).Call(context.Background(), "2^8")
	assert.ErrorIs(t, err, ErrTooLarge)
}

func TestToolCallReturnsContextErrorsUnwrapped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New().Call(ctx, "1+1")
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, tools.ErrBadInput)
}
