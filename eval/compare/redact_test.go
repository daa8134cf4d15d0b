package compare_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/sim"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/planner-engine/planner/verify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

// echoedKey is the value of PLANNER_TEST_API_KEY in this test. It has no
// well-known key shape, so only the environment rule can catch it.
const echoedKey = "planner-test-0123456789-abcdefghijklmnop"

const echoedMarker = "[REDACTED:PLANNER_TEST_API_KEY]"

// echoingProxy wraps a model as a misbehaving proxy would: every reply
// starts with a line repeating the API key, and calls whose prompt
// mentions failWhen fail with an error quoting it.
func echoingProxy(failWhen string) func(llms.Model) llms.Model {
	return func(m llms.Model) llms.Model {
		return middleware.Wrap(m, func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
			for _, msg := range msgs {
				for _, p := range msg.Parts {
					if tc, ok := p.(llms.TextContent); ok && strings.Contains(tc.Text, failWhen) {
						return nil, fmt.Errorf("proxy: upstream rejected key %s", echoedKey)
					}
				}
			}
			resp, err := m.GenerateContent(ctx, msgs, opts...)
			if err != nil {
				return resp, err
			}
			for _, ch := range resp.Choices {
				ch.Content = "Proxy note: forwarded with key " + echoedKey + "\n" + ch.Content
			}
			return resp, nil
		})
	}
}

func TestSecretsEchoedByTheModelAreScrubbedFromEverythingCompareWrites(t *testing.T) {
	t.Setenv("PLANNER_TEST_API_KEY", echoedKey)
	tasks := demoTasks(t)[:4]
	out := t.TempDir()
	opts := compare.Options{Configs: configPaths("direct", "cot"), LLM: config.LLM{Provider: "sim"}, OutDir: out,
		Scorer: verify.ExactMatch{}, Suite: "demo"}
	loader := newLoader(sim.Profile{Name: "perfect"}, withWrapper(echoingProxy(tasks[0].Question)))
	rep, err := compare.Run(context.Background(), loader, tasks, opts)
	require.NoError(t, err)
	_, err = rep.WriteFiles(out)
	require.NoError(t, err)

	// The stored rows carry the marker where the key was.
	records := storedRecords(t, out, 1)
	require.Len(t, records, 2*len(tasks))
	var answers, errs int
	for _, r := range records {
		for _, field := range []string{r.Answer, r.Error, r.Failure} {
			assert.NotContains(t, field, echoedKey, "%s/%s", r.Config, r.TaskID)
		}
		if strings.Contains(r.Answer, echoedMarker) {
			answers++
		}
		if strings.Contains(r.Error, echoedMarker) {
			errs++
		}
	}
	assert.Equal(t, len(tasks)-1, answers, "direct answers are the whole reply, key line included")
	assert.Equal(t, 2, errs, "the failing task's error, in both configs")

	// No file the comparison wrote holds the key: the database (and its
	// write-ahead log), the traces and the reports.
	var names []string
	require.NoError(t, filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(out, path)
		names = append(names, filepath.ToSlash(rel))
		assert.False(t, strings.Contains(string(b), echoedKey), "%s holds the key", rel)
		return nil
	}))
	assert.Subset(t, names, []string{"results.db", "traces/sim/direct.jsonl", "traces/sim/cot.jsonl", "report.md", "report.json", "report.html"})

	for _, name := range []string{"direct", "cot"} {
		b, err := os.ReadFile(filepath.Join(out, "traces", "sim", name+".jsonl"))
		require.NoError(t, err)
		assert.Contains(t, string(b), echoedMarker, "%s trace", name)
	}
	var fromFile compare.Report
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &fromFile))
	require.Len(t, fromFile.Configs, 2)
	assert.Equal(t, 2*len(tasks), fromFile.Configs[0].Runs+fromFile.Configs[1].Runs)

	// Scrubbing leaves the store's keys alone, so a rerun reuses every
	// result.
	rep, err = compare.Run(context.Background(), loader, tasks, opts)
	require.NoError(t, err)
	assert.Equal(t, 2*len(tasks), rep.Reused)
	assert.Zero(t, rep.Ran)
}

func TestResultsStoredWithSecretsAreScrubbedWhenReported(t *testing.T) {
	t.Setenv("PLANNER_TEST_API_KEY", echoedKey)
	tasks := demoTasks(t)[:1]
	out := t.TempDir()
	opts := compare.Options{Configs: configPaths("direct"), LLM: config.LLM{Provider: "sim"}, OutDir: out, Scorer: verify.ExactMatch{}}
	loader := newLoader(sim.Profile{Name: "perfect"})
	_, err := compare.Run(context.Background(), loader, tasks, opts)
	require.NoError(t, err)

	// An earlier version stored a failure kind holding the key.
	recs := storedRecords(t, out, 1)
	require.Len(t, recs, 1)
	recs[0].Failure, recs[0].Answer = "leak "+echoedKey, "wrong"
	st, err := compare.OpenStore(context.Background(), out)
	require.NoError(t, err)
	require.NoError(t, st.PutAll(context.Background(), recs))
	require.NoError(t, st.Close())

	rep, err := compare.Run(context.Background(), loader, tasks, opts)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Reused)
	js, err := json.Marshal(rep)
	require.NoError(t, err)
	assert.NotContains(t, string(js), echoedKey)
	assert.Contains(t, string(js), "leak "+echoedMarker)
}
