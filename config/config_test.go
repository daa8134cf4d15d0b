package config_test

import (
	"testing"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(vals map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vals[k]; return v, ok }
}

const full = `name: demo
description: a test
llm:
  provider: openai
  model: ${MODEL:-gpt-4o-mini}
  base_url: ${BASE}
  timeout: 30s
  retry: {max_attempts: 5}
tools:
  - calculator
  - {name: search, corpus: demo, top_k: 5}
limits: {timeout: 2m}
nodes:
  - id: act
    type: react
    max_iterations: 4
    prompt: "costs $5 and {{.Question}}"
edges:
  - {from: START, to: act}
  - from: act
    to: {retry: act, done: END}
`

func TestParseDecodesEverySectionWithDefaultsAndEnv(t *testing.T) {
	p, err := config.Parse("p.yaml", []byte(full), env(map[string]string{"BASE": "http://127.0.0.1:8080/v1"}))
	require.NoError(t, err)
	assert.Equal(t, "gpt-4o-mini", p.LLM.Model, "${VAR:-default} falls back")
	assert.Equal(t, "http://127.0.0.1:8080/v1", p.LLM.BaseURL)
	assert.Equal(t, 30*time.Second, p.LLM.Timeout)
	assert.Equal(t, 5, p.LLM.Retry.MaxAttempts)
	assert.Equal(t, config.DefaultMaxSteps, p.Limits.MaxSteps)
	assert.Equal(t, 2*time.Minute, p.Limits.Timeout)
	require.Len(t, p.Tools, 2)
	assert.Equal(t, "calculator", p.Tools[0].Name, "bare string is shorthand for {name: ...}")
	assert.Equal(t, "demo", p.Tools[1].Settings["corpus"])
	require.Len(t, p.Nodes, 1)
	assert.Equal(t, 4, p.Nodes[0].Settings["max_iterations"])
	assert.Equal(t, "costs $5 and {{.Question}}", p.Nodes[0].Settings["prompt"], "bare $ is not expanded")
	targets, err := p.Edges[1].Targets()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"retry": "act", "done": "END"}, targets)
	assert.Equal(t, 14, p.Line("nodes[0]"))
	assert.Equal(t, 16, p.NodeLine(0, "max_iterations"))
}

func TestMCPEntriesLoadAsToolsNamedMCP(t *testing.T) {
	p, err := config.Parse("p.yaml", []byte(`name: x
tools:
  - calculator
  - mcp: {command: [npx, -y, server, ./docs], prefix: fs_}
    approve: true
  - {mcp: {url: "http://127.0.0.1:8931/mcp", include: [a, b]}}
nodes:
  - {id: a, type: direct}
`), env(nil))
	require.NoError(t, err)
	require.Len(t, p.Tools, 3)
	assert.Equal(t, "calculator", p.Tools[0].Name)
	assert.Equal(t, config.MCPTool, p.Tools[1].Name)
	assert.Equal(t, map[string]any{"command": []any{"npx", "-y", "server", "./docs"}, "prefix": "fs_", "approve": true}, p.Tools[1].Settings)
	assert.Equal(t, config.MCPTool, p.Tools[2].Name, "several MCP servers may be listed")
	assert.Equal(t, "http://127.0.0.1:8931/mcp", p.Tools[2].Settings["url"])
	assert.Equal(t, 4, p.Line("tools[1]"))
}

func TestParseRejectsStructuralMistakes(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"no name", "nodes: [{id: a, type: direct}]\n", `missing required key "name"`},
		{"no nodes", "name: x\n", "at least one node"},
		{"duplicate ids", "name: x\nnodes:\n  - {id: a, type: direct}\n  - {id: a, type: cot}\n", `duplicate node id "a" (first declared at line 3)`},
		{"reserved id", "name: x\nnodes:\n  - {id: END, type: direct}\n", "reserved"},
		{"no type", "name: x\nnodes:\n  - {id: a}\n", `node "a" has no "type"`},
		{"bad to", "name: x\nnodes:\n  - {id: a, type: direct}\nedges:\n  - {from: a, to: 3}\n", "'to' must be a node id, a map of route to node id or a list"},
		{"bad fan-out item", "name: x\nnodes:\n  - {id: a, type: direct}\nedges:\n  - {from: a, to: [b, {c: d}]}\n", "fan-out item 2 must be a node id"},
		{"negative max_parallel", "name: x\nlimits: {max_parallel: -1}\nnodes:\n  - {id: a, type: direct}\n", "limits.max_parallel must be positive"},
		{"tool twice", "name: x\ntools: [calculator, calculator]\nnodes:\n  - {id: a, type: direct}\n", "listed twice"},
		{"typo in a nested section", "name: x\nllm:\n  retry: {max_attempt: 2}\nnodes:\n  - {id: a, type: direct}\n", `unknown key "max_attempt" in llm.retry (did you mean "max_attempts"? known keys: max_attempts, base_delay, max_delay, max_retry_after)`},
		{"bad duration", "name: x\nlimits: {timeout: soon}\nnodes:\n  - {id: a, type: direct}\n", "limits.timeout"},
		{"mcp and name", "name: x\ntools: [{name: calculator, mcp: {url: u}}]\nnodes:\n  - {id: a, type: direct}\n", `either "name"`},
		{"mcp not a mapping", "name: x\ntools: [{mcp: [a]}]\nnodes:\n  - {id: a, type: direct}\n", "mcp must be a mapping"},
		{"mcp key outside", "name: x\ntools: [{mcp: {url: u}, prefix: p_}]\nnodes:\n  - {id: a, type: direct}\n", `key "prefix" belongs inside the mcp mapping`},
		{"no tool name", "name: x\ntools: [{corpus: demo}]\nnodes:\n  - {id: a, type: direct}\n", `has no "name" (or "mcp"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse("p.yaml", []byte(tc.yaml), env(nil))
			require.ErrorIs(t, err, config.ErrInvalid)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "p.yaml:")
		})
	}
}
