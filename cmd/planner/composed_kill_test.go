package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echoFake is a loopback OpenAI-compatible chat server that answers a
// last user message "echo X" with X upper-cased, and counts the requests
// for each message. Request number holdAt (from 1), when set, is held
// until the test ends, and its arrival reported on held.
type echoFake struct {
	mu     sync.Mutex
	seen   map[string]int
	count  int
	holdAt int
	held   chan string
	stop   chan struct{}
}

func (f *echoFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	last := ""
	if n := len(req.Messages); n > 0 {
		last = fmt.Sprint(req.Messages[n-1].Content)
	}
	f.mu.Lock()
	f.count++
	n := f.count
	f.seen[last]++
	f.mu.Unlock()
	if n == f.holdAt {
		f.held <- last
		select {
		case <-f.stop:
		case <-r.Context().Done():
		}
		return
	}
	text := strings.ToUpper(strings.TrimPrefix(last, "echo "))
	reply, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-" + strconv.Itoa(n), "object": "chat.completion", "created": 1, "model": "fake-model",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
	})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(reply)
}

func (f *echoFake) requests() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]int, len(f.seen))
	for k, v := range f.seen {
		out[k] = v
	}
	return out
}

// composedConfig is a pipeline with a map (4 items, 2 at a time), a
// subgraph of two sequential calls and a fan-out of three branches: 9
// model calls, each with its own prompt.
const composedConfig = `name: composed
limits: {max_steps: 10, timeout: 2m}
nodes:
  - {id: items, type: set, assign: {qs: 'toJSON(["a", "b", "c", "d"])'}}
  - id: each
    type: map
    over: var:qs
    max_parallel: 2
    into: var:answers
    graph:
      nodes: [{id: say, type: direct, prompt: "echo item {{.Question}}"}]
      edges: [{from: START, to: say}, {from: say, to: END}]
  - id: sub
    type: subgraph
    output: var:subout
    graph:
      nodes:
        - {id: one, type: direct, prompt: "echo sub one", output: "var:one"}
        - {id: two, type: direct, prompt: "echo sub two after {{.Vars.one}}"}
      edges: [{from: START, to: one}, {from: one, to: two}, {from: two, to: END}]
  - {id: b1, type: direct, prompt: "echo branch 1 {{.Vars.subout}} {{.Vars.answers}}", output: "var:v"}
  - {id: b2, type: direct, prompt: "echo branch 2 {{.Vars.subout}}", output: "var:v"}
  - {id: b3, type: direct, prompt: "echo branch 3", output: "var:v"}
  - {id: j, type: join, merge: concat, from: var:v, into: answer, separator: " | "}
edges:
  - {from: START, to: items}
  - {from: items, to: each}
  - {from: each, to: sub}
  - {from: sub, to: [b1, b2, b3]}
  - {from: b1, to: j}
  - {from: b2, to: j}
  - {from: b3, to: j}
  - {from: j, to: END}
`

// A journaled run of a composed pipeline killed with SIGKILL while a
// model call of a map item, of a subgraph or of a parallel branch is in
// flight resumes to the uninterrupted run's answer, and no call that had
// finished before the kill is made again: every prompt is sent once,
// but the one in flight at the kill, which is sent twice.
func TestComposedRunSurvivesSIGKILLInsideItsParts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 20 processes")
	}
	config := filepath.Join(t.TempDir(), "composed.yaml")
	require.NoError(t, os.WriteFile(config, []byte(composedConfig), 0o600))
	args := func(store string) []string {
		return []string{"run", "--config", config, "--llm", "openai:fake-model", "--thread", "t", "--store", store, "--json", "-q", "go"}
	}
	base := &echoFake{seen: map[string]int{}}
	srv := httptest.NewServer(base)
	defer srv.Close()
	out, err := mainCommand(t.Context(), t, fakeEnv(srv.URL), args(filepath.Join(t.TempDir(), "threads.db"))...).Output()
	require.NoError(t, err, "uninterrupted run: %s", out)
	var want runOutput
	require.NoError(t, json.Unmarshal(lastLine(out), &want))
	require.True(t, want.Complete, "%s", out)
	require.Equal(t, `BRANCH 1 SUB TWO AFTER SUB ONE ["ITEM A","ITEM B","ITEM C","ITEM D"] | BRANCH 2 SUB TWO AFTER SUB ONE | BRANCH 3`, want.Answer)
	prompts := base.requests()
	require.Len(t, prompts, 9)
	for p, n := range prompts {
		require.Equal(t, 1, n, p)
	}

	for k := 1; k <= 9; k++ {
		t.Run(fmt.Sprintf("kill_at_request_%d", k), func(t *testing.T) {
			fake := &echoFake{seen: map[string]int{}, holdAt: k, held: make(chan string, 1), stop: make(chan struct{})}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			defer close(fake.stop)
			store := filepath.Join(t.TempDir(), "threads.db")
			cmd := mainCommand(t.Context(), t, fakeEnv(srv.URL), args(store)...)
			require.NoError(t, cmd.Start())
			var inFlight string
			select {
			case inFlight = <-fake.held:
			case <-time.After(time.Minute):
				_ = cmd.Process.Kill()
				t.Fatal("request never arrived")
			}
			// The calls running beside the held one finish and are
			// journaled; then the process dies mid-call.
			time.Sleep(time.Second)
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			_ = cmd.Wait()

			res, err := mainCommand(t.Context(), t, fakeEnv(srv.URL), "resume", "t", "--store", store, "--json", "-q").Output()
			require.NoError(t, err, "resume: %s", res)
			var got runOutput
			require.NoError(t, json.Unmarshal(lastLine(res), &got))
			assert.Equal(t, want.Answer, got.Answer)
			assert.Equal(t, "done", got.Status)
			for p, n := range fake.requests() {
				if p == inFlight {
					assert.Equal(t, 2, n, "the call in flight at the kill (%s) is made again", p)
				} else {
					assert.Equal(t, 1, n, "a finished call (%s) is not made again", p)
				}
			}
			assert.Len(t, fake.requests(), 9)
			t.Logf("killed during %q", inFlight)
		})
	}
}
