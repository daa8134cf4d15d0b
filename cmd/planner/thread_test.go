package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stepsFake is a loopback OpenAI-compatible chat server that plays a
// ReAct run of n calculator steps and counts the requests it serves. Its
// reply depends only on the request (the highest step whose action the
// prompt already holds), as a real model's would, so a resumed run gets
// the same replies.
type stepsFake struct {
	n int
	// delay is how long each reply takes, in nanoseconds.
	delay    atomic.Int64
	requests atomic.Int64
	// arrived receives the request count after each request arrives.
	arrived chan int64
}

var stepRE = regexp.MustCompile(`1000\+(\d+)`)

func (f *stepsFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	count := f.requests.Add(1)
	if f.arrived != nil {
		select {
		case f.arrived <- count:
		default:
		}
	}
	next := 0
	for _, m := range stepRE.FindAllStringSubmatch(string(body), -1) {
		if i, _ := strconv.Atoi(m[1]); i+1 > next {
			next = i + 1
		}
	}
	text := fmt.Sprintf("Thought: step %d of the sum.\nAction: calculator\nAction Input: 1000+%d", next, next)
	if next == f.n {
		text = fmt.Sprintf("Thought: I added every step.\nFinal Answer: %d", 1000*f.n+f.n*(f.n-1)/2)
	}
	time.Sleep(time.Duration(f.delay.Load()))
	reply, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-" + strconv.FormatInt(count, 10), "object": "chat.completion", "created": 1, "model": "fake-model",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
	})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(reply)
}

// newServer serves h on loopback for the test and returns its URL.
func newServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// tenStepConfig writes a ReAct pipeline that allows a 10-step run.
func tenStepConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "react10.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`name: react10
tools: [calculator]
limits: {max_steps: 3, timeout: 2m}
nodes:
  - {id: act, type: react, mode: text, max_iterations: 14, keep_steps: 3}
edges:
  - {from: START, to: act}
  - {from: act, to: END}
`), 0o600))
	return path
}

func fakeEnv(url string) []string {
	return []string{"OPENAI_API_KEY=sk-test-not-a-real-key-123456", "OPENAI_BASE_URL=" + url + "/v1", "HOME=" + os.TempDir(), "NO_COLOR=1"}
}

// A journaled 10-step run killed with SIGKILL at 20 random instants
// resumes each time to the uninterrupted run's answer, and the model
// server sees at most one request more than the uninterrupted run made
// (the one in flight when the process died).
func TestThreadSurvivesSIGKILLAtRandomPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 60 processes")
	}
	config := tenStepConfig(t)
	const steps = 10
	args := func(store, thread string) []string {
		return []string{"run", "--config", config, "--llm", "openai:fake-model", "--thread", thread, "--store", store, "--json", "-q", "What is the sum?"}
	}

	base := &stepsFake{n: steps}
	srv := httptest.NewServer(base)
	defer srv.Close()
	store := filepath.Join(t.TempDir(), "threads.db")
	out, err := mainCommand(t.Context(), t, fakeEnv(srv.URL), args(store, "base")...).Output()
	require.NoError(t, err, "uninterrupted run: %s", out)
	var want runOutput
	require.NoError(t, json.Unmarshal(lastLine(out), &want))
	require.True(t, want.Complete, "%s", out)
	require.Equal(t, strconv.Itoa(1000*steps+steps*(steps-1)/2), want.Answer)
	uninterrupted := base.requests.Load()
	require.Equal(t, int64(steps+1), uninterrupted)

	rng := rand.New(rand.NewPCG(13, 20))
	type point struct {
		after int64         // kill after this request arrived...
		wait  time.Duration // ...and this long
	}
	points := make([]point, 20)
	for i := range points {
		points[i] = point{after: 1 + rng.Int64N(uninterrupted), wait: time.Duration(rng.IntN(12)) * time.Millisecond}
	}
	var mu sync.Mutex
	sem := make(chan struct{}, 4)
	for i, pt := range points {
		t.Run(fmt.Sprintf("kill%02d_after_request_%d_plus_%s", i, pt.after, pt.wait), func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			fake := &stepsFake{n: steps, arrived: make(chan int64, 64)}
			fake.delay.Store(int64(5 * time.Millisecond))
			srv := httptest.NewServer(fake)
			defer srv.Close()
			store := filepath.Join(t.TempDir(), "threads.db")
			cmd := mainCommand(t.Context(), t, fakeEnv(srv.URL), args(store, "t")...)
			require.NoError(t, cmd.Start())
			killed := false
			for n := range fake.arrived {
				if n >= pt.after {
					time.Sleep(pt.wait)
					killed = cmd.Process.Signal(syscall.SIGKILL) == nil
					break
				}
			}
			_ = cmd.Wait()
			require.True(t, killed)
			before := fake.requests.Load()

			res, err := mainCommand(t.Context(), t, fakeEnv(srv.URL), "resume", "t", "--store", store, "--json", "-q").Output()
			require.NoError(t, err, "resume: %s", res)
			var got runOutput
			require.NoError(t, json.Unmarshal(lastLine(res), &got))
			assert.Equal(t, want.Answer, got.Answer)
			assert.True(t, got.Complete)
			assert.Equal(t, "done", got.Status)
			total := fake.requests.Load()
			assert.LessOrEqual(t, total, uninterrupted+1, "requests: %d before the kill, %d in all", before, total)
			mu.Lock()
			defer mu.Unlock()
			t.Logf("killed after request %d (+%s): %d requests before the kill, %d in all (uninterrupted: %d)", pt.after, pt.wait, before, total, uninterrupted)
		})
	}
}

func lastLine(b []byte) []byte {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return []byte(lines[len(lines)-1])
}
