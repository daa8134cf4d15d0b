package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/planner-engine/planner/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// settledGoroutines waits until the goroutine count is at most want and
// has not changed for 100ms (or 5 seconds passed), and returns it.
func settledGoroutines(want int) int {
	deadline := time.Now().Add(5 * time.Second)
	last, since := -1, time.Now()
	for {
		n := runtime.NumGoroutine()
		if n != last {
			last, since = n, time.Now()
		}
		if (n <= want && time.Since(since) >= 100*time.Millisecond) || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// 200 concurrent runs through the API against the scripted model all
// complete, and leave no goroutine behind.
func TestLoad200ConcurrentRuns(t *testing.T) {
	const runs = 200
	e := newEnv(t) // the default limits: 32 runs at once, the rest queued
	req := server.RunRequest{Config: "react", Question: spiders, LLM: "scripted:spiders.yaml"}
	e.wait(e.start(req).RunID) // warm up: the tokenizer, the first pipeline
	client := e.ts.Client()
	client.CloseIdleConnections()
	before := settledGoroutines(1 << 30)

	body, err := json.Marshal(req)
	require.NoError(t, err)
	start := time.Now()
	ids := make([]string, runs)
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i := range runs {
		wg.Go(func() {
			res, err := client.Post(e.ts.URL+"/api/runs", "application/json", bytes.NewReader(body))
			if err != nil {
				errs <- err
				return
			}
			defer res.Body.Close()
			var acc server.Accepted
			if err := json.NewDecoder(res.Body).Decode(&acc); err != nil || res.StatusCode != http.StatusAccepted {
				errs <- err
				return
			}
			ids[i] = acc.RunID
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	accepted := time.Since(start)
	require.Eventually(t, func() bool {
		return e.do("GET", "/healthz", nil).json2(t)["runs_active"] == 0.0
	}, 60*time.Second, 10*time.Millisecond)
	wall := time.Since(start)
	for _, id := range ids {
		require.NotEmpty(t, id, "every run was accepted")
		v := e.wait(id)
		require.Equal(t, "done", v.Status, "%+v", v)
		require.Equal(t, "24", v.Answer)
		require.True(t, v.Complete)
	}
	t.Logf("%d concurrent ReAct runs (2 model calls, 1 tool call, 4 journal entries each): accepted in %s, all complete in %s (%.0f runs/s)", runs, accepted.Round(time.Millisecond), wall.Round(time.Millisecond), runs/wall.Seconds())

	r := e.do("GET", "/api/threads?status=done", nil)
	var threads struct {
		Threads []server.ThreadView `json:"threads"`
	}
	r.json(t, &threads)
	assert.Len(t, threads.Threads, runs+1, "every run is a durable thread")

	client.CloseIdleConnections()
	e.ts.CloseClientConnections()
	after := settledGoroutines(before)
	t.Logf("goroutines: %d before, %d after", before, after)
	assert.LessOrEqual(t, after, before, "no goroutine leak")
}
