//go:build integration

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/internal/npmclients"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpClientScript drives planner with the official MCP TypeScript SDK:
// over stdio (planner mcp, spawned by the SDK) and over streamable HTTP
// (planner serve's /mcp, with its token). It prints one JSON object.
const mcpClientScript = `
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const env = process.env;
const out = {};

async function session(transport, elicit) {
  const client = new Client({ name: "ts-sdk-test", version: "1.0.0" }, { capabilities: elicit ? { elicitation: {} } : {} });
  const asked = [];
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      return { action: "accept", content: { approve: true } };
    });
  }
  await client.connect(transport);
  return { client, asked };
}

async function exercise(name, transport, elicit) {
  const { client, asked } = await session(transport, elicit);
  const r = {};
  r.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  const progress = [];
  const res = await client.callTool({ name: "react", arguments: { question: "How many legs do 3 spiders have?" } }, undefined,
    { onprogress: (p) => progress.push(p) });
  r.answer = res.structuredContent && res.structuredContent.answer;
  r.text = res.content.map((c) => c.text).join("\n");
  r.isError = !!res.isError;
  r.usage = res.structuredContent && res.structuredContent.usage;
  r.progress = progress.map((p) => p.message);
  const ap = await client.callTool({ name: "approval", arguments: { question: "How many legs do 3 spiders have?" } });
  r.approval = { status: ap.structuredContent && ap.structuredContent.status, answer: ap.structuredContent && ap.structuredContent.answer,
    text: ap.content.map((c) => c.text).join("\n"), asked };
  await client.close();
  out[name] = r;
}

await exercise("stdio", new StdioClientTransport({
  command: env.PLANNER_EXE,
  args: ["mcp", "--dir", env.MCP_DIR, "--llm", env.MCP_LLM, "--store", env.MCP_STORE, "--root", env.MCP_ROOT],
  env: { PATH: env.PATH, HOME: env.HOME, PLANNER_CLI_TEST_RUN_MAIN: "1", GORACE: "atexit_sleep_ms=0" },
  stderr: "inherit",
}), true);

await exercise("http", new StreamableHTTPClientTransport(new URL(env.MCP_URL), {
  requestInit: { headers: { Authorization: "Bearer " + env.MCP_TOKEN } },
}), false);

console.log(JSON.stringify(out));
`

// mcpSession is what the script reports of one transport.
type mcpSession struct {
	Tools    []string       `json:"tools"`
	Answer   string         `json:"answer"`
	Text     string         `json:"text"`
	IsError  bool           `json:"isError"`
	Usage    map[string]int `json:"usage"`
	Progress []string       `json:"progress"`
	Approval struct {
		Status string   `json:"status"`
		Answer string   `json:"answer"`
		Text   string   `json:"text"`
		Asked  []string `json:"asked"`
	} `json:"approval"`
}

// The official TypeScript SDK lists the pipelines as tools, calls one with
// progress and gets its answer, over stdio (planner mcp) and over planner
// serve's /mcp; over stdio it approves a tool call by elicitation, over
// HTTP (no elicitation) the call returns the waiting thread.
func TestTypeScriptSDKDrivesPlannerAsAnMCPServer(t *testing.T) {
	dir := t.TempDir()
	cfgs := filepath.Join(dir, "configs")
	require.NoError(t, os.MkdirAll(cfgs, 0o755))
	const spidersScript = "strict: true\nreplies:\n  - node: react\n    contains: \"3 spiders\"\n    text: |\n      Thought: Each spider has 8 legs.\n      Action: calculator\n      Action Input: 3*8\n" +
		"  - node: react\n    regex: '\\b24\\b'\n    text: |\n      Thought: 3 spiders have 24 legs.\n      Final Answer: 24\n"
	for name, body := range map[string]string{
		"configs/react.yaml":    "name: react\ndescription: \"ReAct with a calculator\"\ntools: [calculator]\nlimits: {max_steps: 5}\nnodes:\n  - {id: act, type: react, mode: text, max_iterations: 12}\nedges:\n  - {from: START, to: act}\n  - {from: act, to: END}\n",
		"configs/approval.yaml": "name: approval\ndescription: \"ReAct whose calculator calls need approval\"\ntools: [{name: calculator, approve: true}]\nlimits: {max_steps: 5}\nnodes:\n  - {id: act, type: react, mode: text, max_iterations: 12}\nedges:\n  - {from: START, to: act}\n  - {from: act, to: END}\n",
		"spiders.yaml":          spidersScript,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	llm := "scripted:" + filepath.Join(dir, "spiders.yaml")
	exe, err := os.Executable()
	require.NoError(t, err)

	// planner serve on a free port, with a token.
	const token = "mcp-integration-token-0123456789"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serve := mainCommand(ctx, t, append(isolatedEnv(), "PLANNER_SERVE_TOKEN="+token),
		"serve", "--addr", "127.0.0.1:0", "--dir", cfgs, "--llm", llm, "--store", filepath.Join(dir, "serve.db"), "--root", dir)
	stdout, err := serve.StdoutPipe()
	require.NoError(t, err)
	serve.Stderr = os.Stderr
	require.NoError(t, serve.Start())
	t.Cleanup(func() { cancel(); _ = serve.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "serving http://"); ok {
				lines <- strings.Fields(rest)[0]
			}
		}
	}()
	var addr string
	select {
	case addr = <-lines:
	case <-time.After(60 * time.Second):
		t.Fatal("planner serve did not say where it listens")
	}

	out := npmclients.Run(t, npmclients.SuiteMCP, npmclients.Script{Source: mcpClientScript, Env: []string{
		"PLANNER_EXE=" + exe, "MCP_DIR=" + cfgs, "MCP_LLM=" + llm, "MCP_STORE=" + filepath.Join(dir, "stdio.db"), "MCP_ROOT=" + dir,
		"MCP_URL=http://" + addr + "/mcp", "MCP_TOKEN=" + token,
	}})
	var got map[string]mcpSession
	require.NoError(t, json.Unmarshal(out, &got), "script output: %s", out)
	for _, name := range []string{"stdio", "http"} {
		s := got[name]
		assert.Equal(t, []string{"approval", "react"}, s.Tools, name)
		assert.False(t, s.IsError, "%s: %s", name, s.Text)
		assert.Equal(t, "24", s.Answer, name)
		assert.Equal(t, "24", s.Text, name)
		assert.Equal(t, 2, s.Usage["model_calls"], name)
		assert.Contains(t, s.Progress, "action act", name)
		assert.Contains(t, s.Progress, "run_end", name)
	}
	stdio := got["stdio"]
	require.Len(t, stdio.Approval.Asked, 1, "stdio: the client is asked once")
	assert.Contains(t, stdio.Approval.Asked[0], "calculator")
	assert.Equal(t, "done", stdio.Approval.Status, stdio.Approval.Text)
	assert.Equal(t, "24", stdio.Approval.Answer)
	http := got["http"]
	assert.Equal(t, "waiting", http.Approval.Status, http.Approval.Text)
	assert.Contains(t, http.Approval.Text, "/api/approvals/")
}
