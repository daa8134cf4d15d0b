package executor_test

import (
	"strings"
	"testing"

	"github.com/planner-engine/planner/executor"
	"github.com/planner-engine/planner/nodekind"
	"github.com/stretchr/testify/assert"
)

func TestCustomTextModeSystemPromptGetsTheToolListAppended(t *testing.T) {
	env := nodekind.Env{Tools: registry(t, echoTool())}
	custom := nodekind.PromptSources{System: "You solve tasks carefully."}

	sys := systemPrompt(t, env, executor.ReActConfig{PromptSources: custom})
	assert.Equal(t, "You solve tasks carefully.\n\n"+nodekind.CompletionMarker+" the custom prompt does not use .Extra.Tools or .Extra.ToolNames ---\nTools:\n- echo: test tool echo Input schema: {", sys[:strings.Index(sys, "{")+1])

	// Tools mode sends the tools natively; a prompt naming the tools is left alone.
	sys = systemPrompt(t, env, executor.ReActConfig{PromptSources: custom, Mode: executor.ModeTools})
	assert.Equal(t, "You solve tasks carefully.", sys)
	sys = systemPrompt(t, env, executor.ReActConfig{PromptSources: nodekind.PromptSources{System: "Use {{.Extra.ToolNames}}."}})
	assert.Equal(t, "Use echo.", sys)
}
