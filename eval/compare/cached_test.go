package compare_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/eval/compare"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

// TestReportsShowCachedPromptTokensWhereAnyRunHadSome: the tables get a
// "cached tok/task" column after the prompt tokens, with the mean per
// task, and report.json lists it with its field, only when some run
// reported prompt tokens served from the provider's cache.
func TestReportsShowCachedPromptTokensWhereAnyRunHadSome(t *testing.T) {
	records := []compare.Record{
		{Config: "react", TaskID: "a", Scored: true, Correct: true, ModelCalls: 3, PromptTokens: 3000, CachedPromptTokens: 1800, CompletionTokens: 90},
		{Config: "react", TaskID: "b", Scored: true, Correct: true, ModelCalls: 4, PromptTokens: 4000, CachedPromptTokens: 2600, CompletionTokens: 100},
		{Config: "cot", TaskID: "a", Scored: true, Correct: true, ModelCalls: 1, PromptTokens: 500, CompletionTokens: 80},
		{Config: "cot", TaskID: "b", Scored: true, ModelCalls: 1, PromptTokens: 500, CompletionTokens: 80},
	}
	rep := compare.Summarize(records, []string{"react", "cot"})
	rep.Suite, rep.Tasks = "demo", 2
	require.Equal(t, 4400, rep.Configs[0].CachedPromptTokens)
	assert.InDelta(t, 2200, rep.Configs[0].PerTask().CachedPromptTokens, 1e-9)
	assert.Zero(t, rep.Configs[1].CachedPromptTokens)

	var table, md bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	require.NoError(t, rep.WriteMarkdown(&md))
	assert.Regexp(t, `(?m)^config +success .* prompt tok/task +cached tok/task +compl tok/task `, table.String())
	assert.Regexp(t, `(?m)^react +.* 3500 +2200 +95 `, table.String())
	assert.Regexp(t, `(?m)^cot +.* 500 +0 +80 `, table.String())
	assert.Contains(t, md.String(), "| prompt tok/task | cached tok/task | compl tok/task |")
	assert.Contains(t, md.String(), "| 3500 | 2200 | 95 |")
	page, err := rep.HTML()
	require.NoError(t, err)
	assert.Contains(t, string(page), "<th>cached tok/task</th>")
	assert.Contains(t, string(page), "<td>2200</td>")

	js, err := json.Marshal(rep)
	require.NoError(t, err)
	var parsed struct {
		Columns []compare.ColumnDoc `json:"columns"`
		Configs []struct {
			Cached  int `json:"cached_prompt_tokens"`
			PerTask struct {
				Cached float64 `json:"cached_prompt_tokens"`
			} `json:"per_task"`
		} `json:"configs"`
	}
	require.NoError(t, json.Unmarshal(js, &parsed))
	assert.Equal(t, rep.Columns(), parsed.Columns)
	assert.Contains(t, parsed.Columns, compare.ColumnDoc{Column: "cached tok/task", Field: "per_task.cached_prompt_tokens",
		Meaning: "prompt tokens per task served from the provider's prompt cache (part of prompt tok/task, priced at the cached rate)"})
	assert.Equal(t, 4400, parsed.Configs[0].Cached)
	assert.InDelta(t, 2200, parsed.Configs[0].PerTask.Cached, 1e-9)

	// Without cached tokens, no column.
	plain := compare.Summarize(records[2:], []string{"cot"})
	var t2 bytes.Buffer
	require.NoError(t, plain.WriteTable(&t2))
	assert.NotContains(t, t2.String(), "cached")
	assert.Equal(t, compare.Columns(), plain.Columns())
}

// TestTheStoreKeepsCachedPromptTokensAndUpgradesOldTables: a results.db
// made before the column existed gets it (0 for its results) and keeps
// its results.
func TestTheStoreKeepsCachedPromptTokensAndUpgradesOldTables(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "results.db"))
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE records (
		config TEXT NOT NULL, task_id TEXT NOT NULL, seed INTEGER NOT NULL, fingerprint TEXT NOT NULL, model TEXT NOT NULL,
		answer TEXT, complete INTEGER, correct INTEGER, scored INTEGER, em REAL, f1 REAL, has_f1 INTEGER,
		failure TEXT, error TEXT, model_calls INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER,
		tool_calls INTEGER, estimated INTEGER, cost_usd REAL, latency_ms REAL, steps INTEGER, trace TEXT, faults TEXT,
		PRIMARY KEY (config, task_id, seed, fingerprint, model))`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO records VALUES ('react','old',1,'fp','sim','42',1,1,1,1,1,0,'','',3,300,30,1,0,0,5,4,'','')`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	ctx := context.Background()
	st, err := compare.OpenStore(ctx, dir)
	require.NoError(t, err)
	require.NoError(t, st.PutAll(ctx, []compare.Record{{Config: "react", TaskID: "new", Seed: 1, Fingerprint: "fp", Model: "anthropic:claude",
		Answer: "7", ModelCalls: 2, PromptTokens: 5000, CachedPromptTokens: 4096, CompletionTokens: 20}}))
	require.NoError(t, st.Close())
	// Opening it again finds the column there.
	st, err = compare.OpenStore(ctx, dir)
	require.NoError(t, err)
	defer st.Close()
	recs, err := st.All(ctx, 1)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	byID := map[string]compare.Record{}
	for _, r := range recs {
		byID[r.TaskID] = r
	}
	assert.Equal(t, 300, byID["old"].PromptTokens)
	assert.Zero(t, byID["old"].CachedPromptTokens)
	assert.Equal(t, 4096, byID["new"].CachedPromptTokens)
	assert.True(t, strings.HasPrefix(byID["new"].Model, "anthropic"))
}
