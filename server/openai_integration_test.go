//go:build integration

package server_test

import (
	"encoding/json"
	"testing"

	"github.com/planner-engine/planner/internal/npmclients"
	"github.com/planner-engine/planner/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openaiNodeScript asks the server through the official openai package,
// once whole and once streamed, and prints what it got as JSON.
const openaiNodeScript = `import OpenAI from "openai";
const client = new OpenAI({ baseURL: process.env.BASE_URL, apiKey: process.env.API_KEY });
const out = {};
const models = await client.models.list();
out.models = models.data.map((m) => m.id).sort();
const c = await client.chat.completions.create({
  model: "react",
  messages: [{ role: "user", content: process.env.QUESTION }],
});
out.whole = { object: c.object, content: c.choices[0].message.content, role: c.choices[0].message.role,
  finish: c.choices[0].finish_reason, total_tokens: c.usage.total_tokens };
const stream = await client.chat.completions.create({
  model: "react",
  messages: [{ role: "user", content: process.env.QUESTION }],
  stream: true,
  stream_options: { include_usage: true },
});
out.streamed = { content: "", chunks: 0, finish: null, total_tokens: 0, role: null };
for await (const chunk of stream) {
  out.streamed.chunks++;
  const ch = chunk.choices[0];
  if (ch) {
    if (ch.delta.role) out.streamed.role = ch.delta.role;
    out.streamed.content += ch.delta.content ?? "";
    if (ch.finish_reason) out.streamed.finish = ch.finish_reason;
  }
  if (chunk.usage) out.streamed.total_tokens = chunk.usage.total_tokens;
}
try {
  await client.chat.completions.create({ model: "reakt", messages: [{ role: "user", content: "x" }] });
  out.unknown = { status: 0 };
} catch (e) {
  out.unknown = { status: e.status, message: e.message };
}
try {
  const bad = new OpenAI({ baseURL: process.env.BASE_URL, apiKey: "wrong" });
  await bad.models.list();
  out.badKey = { status: 0 };
} catch (e) {
  out.badKey = { status: e.status };
}
console.log(JSON.stringify(out));
`

// TestOpenAINodeClient runs the official openai npm client against the
// server's /v1 endpoint.
func TestOpenAINodeClient(t *testing.T) {
	e := newEnv(t, withLLM("scripted:spiders.yaml"), func(c *server.Config) { c.Token = "s3cret-token" })
	out := npmclients.Run(t, npmclients.SuiteOpenAI, npmclients.Script{Source: openaiNodeScript,
		Env: []string{"BASE_URL=" + e.ts.URL + "/v1", "API_KEY=" + e.token, "QUESTION=" + spiders}})

	var got struct {
		Models []string `json:"models"`
		Whole  struct {
			Object, Content, Role, Finish string
			TotalTokens                   int `json:"total_tokens"`
		} `json:"whole"`
		Streamed struct {
			Content, Finish, Role string
			Chunks                int
			TotalTokens           int `json:"total_tokens"`
		} `json:"streamed"`
		Unknown struct {
			Status  int
			Message string
		} `json:"unknown"`
		BadKey struct{ Status int } `json:"badKey"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	assert.Equal(t, []string{"approval", "broken", "direct", "react"}, got.Models)
	assert.Equal(t, "chat.completion", got.Whole.Object)
	assert.Equal(t, "24", got.Whole.Content)
	assert.Equal(t, "assistant", got.Whole.Role)
	assert.Equal(t, "stop", got.Whole.Finish)
	assert.Positive(t, got.Whole.TotalTokens)
	assert.Equal(t, "24", got.Streamed.Content)
	assert.Equal(t, "assistant", got.Streamed.Role)
	assert.Equal(t, "stop", got.Streamed.Finish)
	assert.Equal(t, 4, got.Streamed.Chunks, "role, content, finish, usage")
	assert.Positive(t, got.Streamed.TotalTokens)
	assert.Equal(t, 404, got.Unknown.Status)
	assert.Contains(t, got.Unknown.Message, `did you mean "react"?`)
	assert.Equal(t, 401, got.BadKey.Status)
}
