package config_test

import (
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func llmPipeline(llmBlock string) []byte {
	return []byte("name: demo\nllm:\n" + llmBlock + "nodes:\n  - {id: act, type: react}\n")
}

func TestParseReadsMaxReplyBytesAndMaxRetryAfter(t *testing.T) {
	p, err := config.Parse("p.yaml", llmPipeline("  provider: openai\n  model: gpt-4o-mini\n  max_reply_bytes: 1024\n  retry: {max_retry_after: 5m}\n"), env(nil))
	require.NoError(t, err)
	assert.Equal(t, 1024, p.LLM.MaxReplyBytes)
	assert.Equal(t, 1024, p.LLM.ReplyLimit())
	assert.Equal(t, 5*time.Minute, p.LLM.Retry.MaxRetryAfter)
}

func TestMaxReplyBytesDefaultsTo256KiB(t *testing.T) {
	p, err := config.Parse("p.yaml", llmPipeline("  provider: openai\n  model: gpt-4o-mini\n"), env(nil))
	require.NoError(t, err)
	assert.Zero(t, p.LLM.MaxReplyBytes)
	assert.Equal(t, 262144, config.DefaultMaxReplyBytes)
	assert.Equal(t, config.DefaultMaxReplyBytes, p.LLM.ReplyLimit())
	assert.Equal(t, config.DefaultMaxReplyBytes, config.LLM{MaxReplyBytes: -5}.ReplyLimit(), "negative means the default")
}

func TestParseRejectsAbsurdModelLimits(t *testing.T) {
	tests := []struct {
		name, block, want string
		line              int
	}{
		{"reply cap above 64 MiB", "  provider: openai\n  max_reply_bytes: 1000000000\n",
			"p.yaml:4: llm.max_reply_bytes: 1000000000 is more than the 67108864 (64 MiB) allowed", 4},
		{"negative timeout", "  provider: openai\n  timeout: -1s\n", "p.yaml:4: llm.timeout: -1s is negative", 4},
		{"negative max_retry_after", "  provider: openai\n  retry: {max_retry_after: -1s}\n",
			"llm.retry.max_retry_after: -1s is negative", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse("p.yaml", llmPipeline(tt.block), env(nil))
			require.ErrorIs(t, err, config.ErrInvalid)
			assert.Contains(t, err.Error(), tt.want)
			var ce *config.Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tt.line, ce.Line)
		})
	}
}

func TestParseReadsTheEmptyReplySettings(t *testing.T) {
	p, err := config.Parse("p.yaml", llmPipeline("  provider: openai\n  empty_retries: 0\n  empty_nudge: Answer, please.\n"), env(nil))
	require.NoError(t, err)
	require.NotNil(t, p.LLM.EmptyRetries, "0 is set, not unset")
	assert.Zero(t, p.LLM.EmptyReplyRetries(), "0 disables")
	assert.Equal(t, "Answer, please.", p.LLM.EmptyNudge)

	p, err = config.Parse("p.yaml", llmPipeline("  provider: openai\n"), env(nil))
	require.NoError(t, err)
	assert.Nil(t, p.LLM.EmptyRetries)
	assert.Equal(t, 2, config.DefaultEmptyRetries)
	assert.Equal(t, config.DefaultEmptyRetries, p.LLM.EmptyReplyRetries())

	_, err = config.Parse("p.yaml", llmPipeline("  provider: openai\n  empty_retries: -1\n"), env(nil))
	require.ErrorIs(t, err, config.ErrInvalid)
	assert.Contains(t, err.Error(), "p.yaml:4: llm.empty_retries: -1 is negative; use 0 to turn the retries of empty replies off")
	_, err = config.Parse("p.yaml", llmPipeline("  provider: openai\n  empty_nudge: \"  \"\n"), env(nil))
	require.ErrorIs(t, err, config.ErrInvalid)
	assert.Contains(t, err.Error(), "llm.empty_nudge: is blank")
}

func TestLLMValidate(t *testing.T) {
	require.NoError(t, config.LLM{Provider: "openai", MaxReplyBytes: config.MaxMaxReplyBytes}.Validate())
	err := config.LLM{MaxReplyBytes: config.MaxMaxReplyBytes + 1}.Validate()
	require.ErrorIs(t, err, config.ErrInvalid)
	assert.Contains(t, err.Error(), "llm.max_reply_bytes")
}

func TestUnknownLLMKeyErrorListsTheNewKeys(t *testing.T) {
	_, err := config.Parse("p.yaml", llmPipeline("  provider: openai\n  max_reply: 3\n"), env(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "max_reply_bytes")
	_, err = config.Parse("p.yaml", llmPipeline("  provider: openai\n  retry: {max_retry: 3}\n"), env(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "max_retry_after")
}
