package score_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/planner-engine/planner/eval/score"
	"github.com/planner-engine/planner/llm/usage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms/openai"
)

// reply is one scripted answer of the fake OpenAI server.
type reply struct {
	status  int    // 0 means 200
	content string // the assistant message of a 200 reply
	body    string // the raw body of an error reply
}

// fakeOpenAI is a loopback server speaking OpenAI's chat-completions wire
// format: it records each request body and answers with the scripted
// replies in turn, repeating the last.
type fakeOpenAI struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  []map[string]any
	replies []reply
}

func newFakeOpenAI(t *testing.T, replies ...reply) *fakeOpenAI {
	t.Helper()
	f := &fakeOpenAI{replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err != nil || r.URL.Path != "/chat/completions" || r.Header.Get("Authorization") != "Bearer test-token" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		n := len(f.bodies)
		f.bodies = append(f.bodies, body)
		rep := f.replies[min(n, len(f.replies)-1)]
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if rep.status != 0 && rep.status != http.StatusOK {
			w.WriteHeader(rep.status)
			_, _ = io.WriteString(w, rep.body)
			return
		}
		_, _ = io.WriteString(w, completion(n, rep.content))
	}))
	t.Cleanup(f.Close)
	return f
}

// completion is a chat.completion body as OpenAI sends it, reporting 100
// prompt and 20 completion tokens.
func completion(n int, content string) string {
	b, _ := json.Marshal(map[string]any{
		"id":      fmt.Sprintf("chatcmpl-test%d", n),
		"object":  "chat.completion",
		"created": 1755695200,
		"model":   "gpt-4o-mini-2024-07-18",
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content, "refusal": nil, "annotations": []any{}},
			"logprobs":      nil,
			"finish_reason": "stop",
		}},
		"usage": map[string]any{
			"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
			"prompt_tokens_details":     map[string]any{"cached_tokens": 0, "audio_tokens": 0},
			"completion_tokens_details": map[string]any{"reasoning_tokens": 0},
		},
		"service_tier": "default",
	})
	return string(b)
}

func (f *fakeOpenAI) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.bodies...)
}

// messages returns the messages of request i.
func (f *fakeOpenAI) messages(t *testing.T, i int) []map[string]any {
	t.Helper()
	reqs := f.requests()
	require.Greater(t, len(reqs), i)
	raw, ok := reqs[i]["messages"].([]any)
	require.True(t, ok, "messages: %v", reqs[i])
	out := make([]map[string]any, len(raw))
	for k, m := range raw {
		out[k] = m.(map[string]any)
	}
	return out
}

// judgeOptions points a langchaingo OpenAI client at f, with a price of $1
// per million prompt tokens and $2 per million completion tokens.
func judgeOptions(t *testing.T, f *fakeOpenAI, cachePath string) score.Options {
	t.Helper()
	model, err := openai.New(openai.WithBaseURL(f.URL), openai.WithToken("test-token"), openai.WithModel("gpt-4o-mini"))
	require.NoError(t, err)
	prices := usage.PriceTable{"gpt-4o-mini": {InputPerMTok: 1, OutputPerMTok: 2}}
	return score.Options{
		JudgeModel:     model,
		JudgeModelName: "openai:gpt-4o-mini",
		Price:          score.TablePrice(prices, "gpt-4o-mini"),
		JudgeCache:     cachePath,
	}
}

var paris = score.Input{TaskID: "t1", Question: "What is the capital of France?", Answer: "It is Paris.", Reference: "Paris"}

const wantCost = (100*1.0 + 20*2.0) / 1e6

func TestJudgeVerdictUsageAndCache(t *testing.T) {
	ctx := context.Background()
	f := newFakeOpenAI(t, reply{content: `Here is my verdict: {"score": 0.9, "pass": true, "reason": "It names Paris,\n the reference."} Hope it helps.`})
	cachePath := filepath.Join(t.TempDir(), "cache", "judge.db")
	j, err := score.Parse(ctx, "judge", judgeOptions(t, f, cachePath))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, score.Close(j)) })
	assert.Equal(t, "judge", j.Name())

	v, err := j.Score(ctx, paris)
	require.NoError(t, err)
	assert.InDelta(t, 0.9, v.Score, 1e-9)
	assert.True(t, v.Pass)
	assert.Equal(t, "It names Paris, the reference.", v.Reason)
	assert.False(t, v.Cached)
	assert.Equal(t, 1, v.Usage.Calls)
	assert.Equal(t, 100, v.Usage.PromptTokens)
	assert.Equal(t, 20, v.Usage.CompletionTokens)
	assert.InDelta(t, wantCost, v.Usage.CostUSD, 1e-12)

	reqs := f.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "gpt-4o-mini", reqs[0]["model"])
	assert.EqualValues(t, 0, reqs[0]["temperature"], "the judge runs at temperature 0")
	msgs := f.messages(t, 0)
	require.Len(t, msgs, 1)
	assert.Equal(t, "user", msgs[0]["role"])
	prompt, _ := msgs[0]["content"].(string)
	assert.Contains(t, prompt, paris.Question)
	assert.Contains(t, prompt, paris.Answer)
	assert.Contains(t, prompt, "Reference answer (taken to be correct):\nParis")
	assert.Contains(t, prompt, `{"score":`)

	// The same input again: a cache hit, no HTTP call, the first cost kept.
	again, err := j.Score(ctx, paris)
	require.NoError(t, err)
	assert.True(t, again.Cached)
	assert.Equal(t, v.Usage, again.Usage)
	assert.Equal(t, v.Score, again.Score)
	assert.Equal(t, v.Reason, again.Reason)
	assert.Len(t, f.requests(), 1)

	// Another judge on the same file (a later run) hits it too.
	other, err := score.Parse(ctx, "judge", judgeOptions(t, f, cachePath))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, score.Close(other)) })
	v3, err := other.Score(ctx, paris)
	require.NoError(t, err)
	assert.True(t, v3.Cached)
	assert.Len(t, f.requests(), 1)

	// A different answer, or the same prompt for another judge model, is
	// judged anew.
	_, err = j.Score(ctx, score.Input{TaskID: "t1", Question: paris.Question, Answer: "Lyon", Reference: "Paris"})
	require.NoError(t, err)
	assert.Len(t, f.requests(), 2)
	opts := judgeOptions(t, f, cachePath)
	opts.JudgeModelName = "openai:gpt-4o"
	byOther, err := score.Parse(ctx, "judge", opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, score.Close(byOther)) })
	v4, err := byOther.Score(ctx, paris)
	require.NoError(t, err)
	assert.False(t, v4.Cached)
	assert.Len(t, f.requests(), 3)
}

func TestJudgeWithoutCacheCallsEachTime(t *testing.T) {
	ctx := context.Background()
	f := newFakeOpenAI(t, reply{content: "```json\n{\"score\": 0, \"pass\": false, \"reason\": \"wrong city\"}\n```"})
	j, err := score.Parse(ctx, "judge", judgeOptions(t, f, ""))
	require.NoError(t, err)
	for range 2 {
		v, err := j.Score(ctx, paris)
		require.NoError(t, err)
		assert.False(t, v.Pass)
		assert.False(t, v.Cached)
		assert.Equal(t, "wrong city", v.Reason)
	}
	assert.Len(t, f.requests(), 2)
}

func TestJudgeConcurrentIdenticalPromptsCallOnce(t *testing.T) {
	ctx := context.Background()
	f := newFakeOpenAI(t, reply{content: `{"score": 1, "pass": true, "reason": "same"}`})
	j, err := score.Parse(ctx, "judge", judgeOptions(t, f, filepath.Join(t.TempDir(), "judge.db")))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, score.Close(j)) })
	const n = 8
	verdicts := make([]score.Verdict, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			verdicts[i], errs[i] = j.Score(ctx, paris)
		}()
	}
	wg.Wait()
	fresh := 0
	for i := range n {
		require.NoError(t, errs[i])
		assert.True(t, verdicts[i].Pass)
		if !verdicts[i].Cached {
			fresh++
		}
	}
	assert.Equal(t, 1, fresh, "one verdict is made, the others are shared")
	assert.Len(t, f.requests(), 1)
}

func TestJudgeRetriesOnceWithFeedback(t *testing.T) {
	ctx := context.Background()
	f := newFakeOpenAI(t, reply{content: "The answer looks right to me."}, reply{content: `{"pass": true, "reason": "Paris"}`})
	j, err := score.Parse(ctx, "judge", judgeOptions(t, f, ""))
	require.NoError(t, err)
	v, err := j.Score(ctx, paris)
	require.NoError(t, err)
	assert.True(t, v.Pass)
	assert.Equal(t, 1.0, v.Score, "pass alone scores 1")
	assert.Equal(t, score.Usage{Calls: 2, PromptTokens: 200, CompletionTokens: 40, CostUSD: 2 * wantCost}, roundCost(v.Usage))

	msgs := f.messages(t, 1)
	require.Len(t, msgs, 3)
	assert.Equal(t, "assistant", msgs[1]["role"])
	assert.Equal(t, "The answer looks right to me.", msgs[1]["content"])
	assert.Equal(t, "user", msgs[2]["role"])
	assert.Contains(t, msgs[2]["content"], "could not be read as the verdict (it holds no JSON object)")
}

func roundCost(u score.Usage) score.Usage {
	u.CostUSD = float64(int64(u.CostUSD*1e9+0.5)) / 1e9
	return u
}

func TestJudgeBadReplyTwiceFails(t *testing.T) {
	ctx := context.Background()
	f := newFakeOpenAI(t, reply{content: `{"score": 7, "pass": true}`}, reply{content: "no idea"})
	j, err := score.Parse(ctx, "judge", judgeOptions(t, f, filepath.Join(t.TempDir(), "judge.db")))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, score.Close(j)) })
	_, err = j.Score(ctx, paris)
	require.ErrorIs(t, err, score.ErrJudgeReply)
	assert.Contains(t, err.Error(), "score 7 is outside [0, 1]")
	assert.Contains(t, err.Error(), `task "t1"`)
	assert.Contains(t, err.Error(), "no idea")
	assert.Len(t, f.requests(), 2)

	// Nothing was cached: the next try asks again.
	_, err = j.Score(ctx, paris)
	require.ErrorIs(t, err, score.ErrJudgeReply)
	assert.Len(t, f.requests(), 4)
}

func TestJudgeServerErrorFails(t *testing.T) {
	ctx := context.Background()
	f := newFakeOpenAI(t, reply{status: http.StatusInternalServerError, body: `{"error": {"message": "The server had an error", "type": "server_error"}}`})
	j, err := score.Parse(ctx, "judge", judgeOptions(t, f, ""))
	require.NoError(t, err)
	_, err = j.Score(ctx, paris)
	require.ErrorIs(t, err, score.ErrJudgeCall)
	assert.Contains(t, err.Error(), "500")
	assert.NotContains(t, err.Error(), "test-token")
	assert.Len(t, f.requests(), 1)
}

func TestJudgeUserRubric(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rubric := filepath.Join(dir, "strict.tmpl")
	require.NoError(t, os.WriteFile(rubric, []byte("Task {{.TaskID}}. Be strict.\nQ: {{.Question}}\nA: {{.Answer}}\nGold: {{.Reference}}\n"), 0o600))
	f := newFakeOpenAI(t, reply{content: `{"score": 0.2}`})
	j, err := score.Parse(ctx, "judge:"+rubric, judgeOptions(t, f, ""))
	require.NoError(t, err)
	assert.Equal(t, "judge:strict", j.Name())
	v, err := j.Score(ctx, paris)
	require.NoError(t, err)
	assert.False(t, v.Pass, "a score alone below 0.5 fails")
	prompt, _ := f.messages(t, 0)[0]["content"].(string)
	assert.Contains(t, prompt, "Task t1. Be strict.\nQ: What is the capital of France?\nA: It is Paris.\nGold: Paris")
	assert.NotContains(t, prompt, "taken to be correct", "the user's rubric replaces the built-in one")
	assert.Contains(t, prompt, `"reason"`, "the verdict format is appended")
}

func TestJudgeSpecErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	f := newFakeOpenAI(t, reply{content: `{"score": 1}`})
	opts := judgeOptions(t, f, "")
	cases := []struct {
		spec string
		opts score.Options
		want string
	}{
		{"judge", score.Options{}, "needs a judge model"},
		{"judge:", opts, "name the rubric file"},
		{"judge:" + filepath.Join(dir, "missing.tmpl"), opts, "no such file"},
		{"judge:" + write("empty.tmpl", "  \n"), opts, "is empty"},
		{"judge:" + write("noanswer.tmpl", "Is {{.Question}} hard?"), opts, "never shows the answer"},
		{"judge:" + write("field.tmpl", "{{.Answer}} {{.Gold}}"), opts, "can't evaluate field Gold"},
		{"judge:" + write("syntax.tmpl", "line one\n{{.Answer}\n"), opts, "syntax.tmpl:2"},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.spec), func(t *testing.T) {
			_, err := score.Parse(ctx, c.spec, c.opts)
			require.ErrorIs(t, err, score.ErrBadSpec)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	// A cache path that cannot be a SQLite file.
	bad := opts
	bad.JudgeCache = write("not-a-db", "this is not a database, just some text long enough to fill a header")
	_, err := score.Parse(ctx, "judge", bad)
	require.ErrorIs(t, err, score.ErrBadSpec)
	require.ErrorIs(t, err, score.ErrJudgeCache)
	assert.Empty(t, f.requests())
}
