package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/planner-engine/planner/server"
	"github.com/planner-engine/planner/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
)

// withLLM sets the server's model spec (--llm).
func withLLM(spec string) option { return func(c *server.Config) { c.LLM = spec } }

type oaiError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    string  `json:"code"`
	} `json:"error"`
}

func (r response) oaiErr(t *testing.T) oaiError {
	t.Helper()
	var e oaiError
	r.json(t, &e)
	require.NotEmpty(t, e.Error.Message, "%s", r.body)
	require.NotEmpty(t, e.Error.Type, "%s", r.body)
	return e
}

func chatBody(model string, stream bool, msgs ...string) map[string]any {
	var m []map[string]any
	for i := 0; i+1 < len(msgs); i += 2 {
		m = append(m, map[string]any{"role": msgs[i], "content": msgs[i+1]})
	}
	return map[string]any{"model": model, "messages": m, "stream": stream}
}

func TestOpenAIModels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("GET", "/v1/models", nil)
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID, Object, OwnedBy string
			Created             int64
		} `json:"data"`
	}
	r.json(t, &list)
	assert.Equal(t, "list", list.Object)
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
		assert.Equal(t, "model", m.Object)
		assert.Positive(t, m.Created)
	}
	assert.ElementsMatch(t, []string{"react", "approval", "direct", "broken"}, ids, "every pipeline of the folder, as GET /api/pipelines lists them")
	assert.Contains(t, string(r.body), `"owned_by":"planner"`)
}

func TestOpenAIChatCompletion(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withLLM("scripted:spiders.yaml"))
	r := e.do("POST", "/v1/chat/completions", map[string]any{"model": "react", "temperature": 0.2,
		"messages": []map[string]any{{"role": "system", "content": "Be brief."}, {"role": "user", "content": spiders}}})
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	var c struct {
		ID, Object, Model string
		Created           int64
		Choices           []struct {
			Index        int
			Message      struct{ Role, Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
			Total      int `json:"total_tokens"`
		}
	}
	r.json(t, &c)
	assert.True(t, strings.HasPrefix(c.ID, "chatcmpl-"), c.ID)
	assert.Equal(t, "chat.completion", c.Object)
	assert.Equal(t, "react", c.Model)
	assert.Positive(t, c.Created)
	require.Len(t, c.Choices, 1)
	assert.Equal(t, "assistant", c.Choices[0].Message.Role)
	assert.Equal(t, "24", c.Choices[0].Message.Content)
	assert.Equal(t, "stop", c.Choices[0].FinishReason)
	assert.Positive(t, c.Usage.Prompt)
	assert.Equal(t, c.Usage.Prompt+c.Usage.Completion, c.Usage.Total)

	// The system turn went to the run as context before the question.
	runs := e.srv.Runs()
	require.Len(t, runs, 1)
	assert.Equal(t, "System: Be brief.\n\n"+spiders, runs[0].Question, "the system message goes before the question")
}

func TestOpenAIChatCompletionStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withLLM("scripted:spiders.yaml"))
	body := chatBody("react", true, "user", "What is 2+2?", "assistant", "4", "user", spiders)
	body["stream_options"] = map[string]any{"include_usage": true}
	r := e.do("POST", "/v1/chat/completions", body)
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	assert.Contains(t, r.header.Get("Content-Type"), "text/event-stream")
	var chunks []map[string]any
	var done bool
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			done = true
			continue
		}
		require.False(t, done, "nothing after [DONE]")
		var c map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &c), line)
		assert.Equal(t, "chat.completion.chunk", c["object"])
		chunks = append(chunks, c)
	}
	require.True(t, done, "%s", r.body)
	require.Len(t, chunks, 4, "%s", r.body)
	delta := func(i int) map[string]any {
		return chunks[i]["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
	}
	assert.Equal(t, "assistant", delta(0)["role"])
	assert.Equal(t, "24", delta(1)["content"])
	assert.Equal(t, "stop", chunks[2]["choices"].([]any)[0].(map[string]any)["finish_reason"])
	assert.Positive(t, chunks[2]["usage"].(map[string]any)["total_tokens"], "the finish chunk carries the usage")
	assert.Empty(t, chunks[3]["choices"])
	assert.Positive(t, chunks[3]["usage"].(map[string]any)["total_tokens"])
	runs := e.srv.Runs()
	require.Len(t, runs, 1)
	assert.Equal(t, spiders, runs[0].Question)
	// The earlier turns are the thread's history, as a follow-up's.
	th, err := e.srv.Store().Thread(context.Background(), runs[0].Thread)
	require.NoError(t, err)
	var task state.Task
	require.NoError(t, json.Unmarshal(th.Task, &task))
	assert.Equal(t, state.History{{Question: "What is 2+2?", Answer: "4"}}, task.History)
	assert.Equal(t, "24", th.Answer, "the thread records its answer")
}

func TestOpenAIStreamWithoutIncludeUsage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withLLM("scripted:spiders.yaml"))
	r := e.do("POST", "/v1/chat/completions", chatBody("react", true, "user", spiders))
	require.Equal(t, http.StatusOK, r.code, "%s", r.body)
	// Without include_usage the usage rides on the finish chunk only: no
	// chunk with empty choices, which older clients do not expect.
	assert.Equal(t, 1, strings.Count(string(r.body), `"usage"`), "%s", r.body)
	assert.NotContains(t, string(r.body), `"choices":[]`)
	assert.True(t, strings.HasSuffix(string(r.body), "data: [DONE]\n\n"), "%s", r.body)
}

func TestOpenAIChatErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withLLM("scripted:spiders.yaml"))
	cases := []struct {
		name  string
		body  any
		code  int
		param string
		msg   string
	}{
		{"bad JSON", `{"model":`, 400, "", "invalid JSON"},
		{"no model", chatBody("", false, "user", spiders), 400, "model", "model is required"},
		{"unknown model", chatBody("reakt", false, "user", spiders), 404, "model", `did you mean "react"?`},
		{"no user message", chatBody("react", false, "system", "hi"), 400, "messages", "user message"},
		{"empty question", chatBody("react", false, "user", "  "), 400, "messages", "empty"},
		{"tool role", chatBody("react", false, "tool", "x", "user", spiders), 400, "messages", "not supported"},
		{"tools", map[string]any{"model": "react", "messages": []map[string]any{{"role": "user", "content": spiders}},
			"tools": []map[string]any{{"type": "function", "function": map[string]any{"name": "f"}}}}, 400, "tools", "tool calls are not supported"},
		{"tool_choice", map[string]any{"model": "react", "messages": []map[string]any{{"role": "user", "content": spiders}}, "tool_choice": "auto"}, 400, "tool_choice", "not supported"},
		{"functions", map[string]any{"model": "react", "messages": []map[string]any{{"role": "user", "content": spiders}},
			"functions": []map[string]any{{"name": "f"}}}, 400, "functions", "not supported"},
		{"image part", map[string]any{"model": "react", "messages": []map[string]any{{"role": "user", "content": []map[string]any{{"type": "image_url"}}}}}, 400, "messages", "only text parts"},
		{"too large", `{"model":"react","messages":[{"role":"user","content":"` + strings.Repeat("x", 2<<20) + `"}]}`, 413, "", "more than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/v1/chat/completions", c.body)
			require.Equal(t, c.code, r.code, "%s", r.body)
			oe := r.oaiErr(t)
			assert.Contains(t, oe.Error.Message, c.msg)
			if c.param == "" {
				assert.Nil(t, oe.Error.Param)
			} else if assert.NotNil(t, oe.Error.Param) {
				assert.Equal(t, c.param, *oe.Error.Param)
			}
		})
	}
	assert.Empty(t, e.srv.Runs(), "no refused request started a run")
}

func TestOpenAIRunFailureIsAnOpenAIError(t *testing.T) {
	t.Parallel()
	// The scripted model has no reply for this question: the run fails.
	e := newEnv(t, withLLM("scripted:spiders.yaml"))
	r := e.do("POST", "/v1/chat/completions", chatBody("react", false, "user", "What is the capital of Peru?"))
	require.Equal(t, http.StatusInternalServerError, r.code, "%s", r.body)
	oe := r.oaiErr(t)
	assert.Equal(t, "server_error", oe.Error.Type)
	assert.Contains(t, oe.Error.Message, "failed")
}

func TestOpenAIClientDisconnectCancelsTheRun(t *testing.T) {
	t.Parallel()
	g := gatedModel()
	g.Hold()
	gates.Store("openai-disconnect", g)
	t.Cleanup(func() { gates.Delete("openai-disconnect") })
	e := newEnv(t, withLLM("gated:openai-disconnect"))
	for _, stream := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		b, err := json.Marshal(chatBody("react", stream, "user", "Add them, steps:4"))
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(ctx, "POST", e.ts.URL+"/v1/chat/completions", bytes.NewReader(b))
		require.NoError(t, err)
		errc := make(chan error, 1)
		go func() {
			res, err := e.ts.Client().Do(req)
			if err == nil {
				_, err = io.ReadAll(res.Body)
				_ = res.Body.Close()
			}
			errc <- err
		}()
		require.Eventually(t, func() bool { return g.Waiting() > 0 }, 10*time.Second, 5*time.Millisecond)
		cancel()
		require.Error(t, <-errc)
		require.Eventually(t, func() bool {
			for _, v := range e.srv.Runs() {
				if v.Status == "queued" || v.Status == "running" {
					return false
				}
			}
			return true
		}, 10*time.Second, 5*time.Millisecond, "the client's disconnect cancels the run (stream %v)", stream)
	}
	runs := e.srv.Runs()
	require.Len(t, runs, 2)
	for _, v := range runs {
		assert.Equal(t, "interrupted", v.Status)
	}
}

func TestOpenAISecurity(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withLLM("scripted:spiders.yaml"))
	body := chatBody("react", false, "user", spiders)
	r := e.do("POST", "/v1/chat/completions", body, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, r.code, "%s", r.body)
	r = e.do("POST", "/v1/chat/completions", body, "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, r.code, "%s", r.body)
	b, err := json.Marshal(body)
	require.NoError(t, err)
	for _, path := range []string{"/v1/chat/completions", "/v1/models"} {
		req, err := http.NewRequest("POST", e.ts.URL+path, bytes.NewReader(b))
		require.NoError(t, err)
		if path == "/v1/models" {
			req.Method = "GET"
		}
		req.Host = "evil.example:8080"
		res, err := e.ts.Client().Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		assert.Equal(t, http.StatusForbidden, res.StatusCode, path)
	}
	assert.Empty(t, e.srv.Runs())

	te := newEnv(t, withLLM("scripted:spiders.yaml"), func(c *server.Config) { c.Token = "s3cret-token" })
	r = te.do("POST", "/v1/chat/completions", body, "Authorization", "")
	assert.Equal(t, http.StatusUnauthorized, r.code, "%s", r.body)
	r = te.do("GET", "/v1/models", nil, "Authorization", "Bearer wrong")
	assert.Equal(t, http.StatusUnauthorized, r.code, "%s", r.body)
	r = te.do("GET", "/v1/models", nil)
	assert.Equal(t, http.StatusOK, r.code, "%s", r.body)
}

func TestOpenAILangchaingoClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withLLM("scripted:spiders.yaml"), func(c *server.Config) { c.Token = "s3cret-token" })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := openai.New(openai.WithBaseURL(e.ts.URL+"/v1"), openai.WithToken(e.token), openai.WithModel("react"), openai.WithHTTPClient(e.ts.Client()))
	require.NoError(t, err)
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, spiders)}
	res, err := m.GenerateContent(ctx, msgs)
	require.NoError(t, err)
	require.Len(t, res.Choices, 1)
	assert.Equal(t, "24", res.Choices[0].Content)
	assert.Equal(t, "stop", res.Choices[0].StopReason)

	var streamed strings.Builder
	res, err = m.GenerateContent(ctx, msgs, llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
		streamed.Write(chunk)
		return nil
	}))
	require.NoError(t, err)
	assert.Equal(t, "24", streamed.String())
	require.Len(t, res.Choices, 1)
	assert.Equal(t, "24", res.Choices[0].Content)

	_, err = openaiModel(t, e, "nosuch").GenerateContent(ctx, msgs)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no model")
}

func openaiModel(t *testing.T, e *env, model string) *openai.LLM {
	t.Helper()
	m, err := openai.New(openai.WithBaseURL(e.ts.URL+"/v1"), openai.WithToken(e.token), openai.WithModel(model), openai.WithHTTPClient(e.ts.Client()))
	require.NoError(t, err)
	return m
}
