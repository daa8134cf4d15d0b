package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// turnsConfig makes two calls per turn; the second shows the earlier
// turns' answers, so a follow-up's answer says what it saw.
const turnsConfig = `name: turns
limits: {max_steps: 5, timeout: 2m}
nodes:
  - {id: one, type: direct, prompt: "echo one {{.Question}}", output: "var:one"}
  - {id: two, type: direct, prompt: "echo two {{.Vars.one}}{{range .History}} after {{.Answer}}{{end}}"}
edges:
  - {from: START, to: one}
  - {from: one, to: two}
  - {from: two, to: END}
`

// A follow-up question on a finished thread runs as its next turn and
// sees the first answer; killed with SIGKILL during its second call, the
// turn resumes (planner resume NAME goes to the latest turn) without
// making any of the first turn's calls, or its own finished call, again.
func TestAFollowUpTurnSurvivesSIGKILL(t *testing.T) {
	config := filepath.Join(t.TempDir(), "turns.yaml")
	require.NoError(t, os.WriteFile(config, []byte(turnsConfig), 0o600))
	store := filepath.Join(t.TempDir(), "threads.db")
	fake := &echoFake{seen: map[string]int{}, holdAt: 4, held: make(chan string, 1), stop: make(chan struct{})}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	defer close(fake.stop)
	run := func(args ...string) []string {
		return append([]string{"run", "--config", config, "--llm", "openai:fake-model", "--thread", "conv", "--store", store, "--json", "-q"}, args...)
	}

	out, err := mainCommand(t.Context(), t, fakeEnv(srv.URL), run("go")...).Output()
	require.NoError(t, err, "first turn: %s", out)
	var first runOutput
	require.NoError(t, json.Unmarshal(lastLine(out), &first))
	require.Equal(t, "TWO ONE GO", first.Answer)

	cmd := mainCommand(t.Context(), t, fakeEnv(srv.URL), run("more")...)
	require.NoError(t, cmd.Start())
	var inFlight string
	select {
	case inFlight = <-fake.held:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("the second turn's second call never arrived")
	}
	require.Equal(t, "echo two ONE MORE after TWO ONE GO", inFlight, "the follow-up's prompt shows the first answer")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	res, err := mainCommand(t.Context(), t, fakeEnv(srv.URL), "resume", "conv", "--store", store, "--json", "-q").CombinedOutput()
	require.NoError(t, err, "resume: %s", res)
	assert.Contains(t, string(res), "continues in its latest turn, thread conv.turn2")
	var got runOutput
	require.NoError(t, json.Unmarshal(lastLine(res), &got))
	assert.Equal(t, "TWO ONE MORE AFTER TWO ONE GO", got.Answer)
	assert.Equal(t, "done", got.Status)
	assert.Equal(t, "conv.turn2", got.Thread)
	assert.Equal(t, map[string]int{"echo one go": 1, "echo two ONE GO": 1, "echo one more": 1, inFlight: 2}, fake.requests(),
		"only the call in flight at the kill is made again")

	// A third turn sees both earlier answers.
	out, err = mainCommand(t.Context(), t, fakeEnv(srv.URL), run("last")...).CombinedOutput()
	require.NoError(t, err, "third turn: %s", out)
	var third runOutput
	require.NoError(t, json.Unmarshal(lastLine(out), &third))
	assert.Equal(t, "conv.turn3", third.Thread)
	assert.Equal(t, "TWO ONE LAST AFTER TWO ONE GO AFTER TWO ONE MORE AFTER TWO ONE GO", third.Answer)

	hist, err := mainCommand(t.Context(), t, fakeEnv(srv.URL), "history", "conv", "--store", store).Output()
	require.NoError(t, err, "history: %s", hist)
	assert.Contains(t, string(hist), "turns:\n  1  conv  done  go -> TWO ONE GO\n  2  conv.turn2  done  more -> TWO ONE MORE AFTER TWO ONE GO\n  3  conv.turn3  done  last -> ")
}
