package journal_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/llm/usage"
)

// tokenMeter measures as the engine's default meter does: the provider's
// report, else a tiktoken estimate (the root package's tokenMeter).
type tokenMeter struct{ est *usage.Estimator }

func (m tokenMeter) Measure(msgs []llms.MessageContent, resp *llms.ContentResponse) (int, int, bool) {
	if u, ok := usage.FromResponse(resp); ok {
		return u.PromptTokens, u.CompletionTokens, u.Estimated
	}
	u := m.est.Estimate(msgs, resp)
	return u.PromptTokens, u.CompletionTokens, u.Estimated
}

// benchRun is the llm.Run of the benchmark's calls.
type benchRun struct{ set *hooks.Set }

func (benchRun) TaskID() string      { return "bench" }
func (r benchRun) Hooks() *hooks.Set { return r.set }

// systemPrompt returns a ReAct system prompt of some 3 KB, with its tools.
func systemPrompt() string {
	return "You are a ReAct agent. Answer the question by interleaving Thought, Action and Observation steps.\n" +
		strings.Repeat("Tool search[query]: searches the web and returns the top snippets for the query, with their sources.\n", 30)
}

// reactThread runs an n-step ReAct-like thread the way a pipeline runs a
// react node: inside one node execution (its hooks' WrapNode), each step
// is a metered model call of the conversation so far (the hooks'
// WrapModel and WrapProvider, through llm.Model.Call) and a tool call of
// its action (WrapTool), whose observation extends the conversation by
// some 230 bytes. set is the run's hooks: a journal session, or none.
func reactThread(ctx context.Context, n int, model llm.Model, set *hooks.Set) error {
	run := benchRun{set: set}
	tool := set.WrapTool(func(_ context.Context, call *hooks.ToolCall) (*hooks.ToolResult, error) {
		return &hooks.ToolResult{Output: "Paris had 2,102,650 inhabitants in 2023 (INSEE); result for " + call.Input + " from insee.fr", Live: true}, nil
	})
	node := set.WrapNode(func(ctx context.Context, nd hooks.Node) (string, error) {
		ctx = journal.WithScope(ctx, journal.NodeScope(nd.Step, nd.ID))
		msgs := []llms.MessageContent{
			llms.TextParts(llms.ChatMessageTypeSystem, systemPrompt()),
			llms.TextParts(llms.ChatMessageTypeHuman, "Question: what is the population of Paris, and how did it change since 2000?"),
		}
		for range n {
			text, _, err := model.Call(ctx, run, llm.CallMeta{Node: nd.ID, Kind: "react"}, msgs)
			if err != nil {
				return "", err
			}
			action := text[strings.LastIndex(text, "[")+1 : len(text)-1]
			res, err := tool(ctx, &hooks.ToolCall{Node: nd.ID, Tool: "search", Input: action})
			if err != nil {
				return "", err
			}
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeAI, text),
				llms.TextParts(llms.ChatMessageTypeHuman, "Observation: "+res.Output))
		}
		return "", nil
	})
	_, err := node(ctx, hooks.Node{ID: "react", Kind: "react", Step: 1})
	return err
}

// reactModel answers step k of a thread with a thought and a search.
func reactModel(est *usage.Estimator) llm.Model {
	return llm.Model{Meter: tokenMeter{est: est}, LLM: llmtest.Func(func(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
		k := (len(msgs) - 2) / 2
		return llmtest.TextResponse(fmt.Sprintf("Thought: I should look up the figure for year %d.\nAction: search[population of Paris in %d]", 2000+k, 2000+k)), nil
	})}
}

// BenchmarkLinearJournal runs an N-call ReAct thread three ways — plain
// (no journal), journaled live into a SQLite store, and resumed from that
// store once finished (every call replayed) — each with a fresh
// tokenizer, as a new process has, and reports the store's bytes per
// model call, the journaled run's wall time over the plain one's, and the
// resume's over the journaled live run's (the best of three runs each).
//
//	go test ./journal -run '^$' -bench LinearJournal -benchtime 1x
func BenchmarkLinearJournal(b *testing.B) {
	for _, n := range []int{20, 100, 500} {
		b.Run(fmt.Sprint("N=", n), func(b *testing.B) {
			ctx := context.Background()
			const reps = 3
			estimator := func() *usage.Estimator {
				b.StopTimer()
				defer b.StartTimer()
				est, err := usage.NewEstimator()
				if err != nil {
					b.Fatal(err)
				}
				return est
			}
			best := func(f func() time.Duration) time.Duration {
				d := time.Duration(1<<63 - 1)
				for range reps {
					d = min(d, f())
				}
				return d
			}
			var plain, live, resume time.Duration
			var size int64
			for range b.N {
				plain = best(func() time.Duration {
					m := reactModel(estimator())
					began := time.Now()
					if err := reactThread(ctx, n, m, nil); err != nil {
						b.Fatal(err)
					}
					return time.Since(began)
				})
				var path string
				live = best(func() time.Duration {
					path = filepath.Join(b.TempDir(), "threads.db")
					s, err := sqlitestore.Open(ctx, path)
					if err != nil {
						b.Fatal(err)
					}
					defer func() { _ = s.Close() }()
					if err := s.Create(ctx, journal.Thread{Name: "t", Pipeline: "react.yaml", Status: journal.StatusRunning}); err != nil {
						b.Fatal(err)
					}
					m := reactModel(estimator())
					began := time.Now()
					r, err := journal.Open(ctx, s, "t")
					if err != nil {
						b.Fatal(err)
					}
					if err := reactThread(ctx, n, m, hooks.NewSet(r)); err != nil {
						b.Fatal(err)
					}
					return time.Since(began)
				})
				size = 0
				for _, suffix := range []string{"", "-wal"} {
					if st, err := os.Stat(path + suffix); err == nil {
						size += st.Size()
					}
				}
				resume = best(func() time.Duration {
					s, err := sqlitestore.Open(ctx, path)
					if err != nil {
						b.Fatal(err)
					}
					defer func() { _ = s.Close() }()
					m := reactModel(estimator())
					began := time.Now()
					r, err := journal.Open(ctx, s, "t")
					if err != nil {
						b.Fatal(err)
					}
					if err := reactThread(ctx, n, m, hooks.NewSet(r)); err != nil {
						b.Fatal(err)
					}
					d := time.Since(began)
					if replayed, live, _ := r.Stats(); live != 0 || replayed != 2*n+1 {
						b.Fatalf("the resumed run replayed %d calls and made %d live", replayed, live)
					}
					return d
				})
			}
			b.ReportMetric(float64(size)/float64(n), "store-B/call")
			b.ReportMetric(float64(live)/float64(plain), "journaled/plain")
			b.ReportMetric(float64(resume)/float64(live), "resume/live")
			b.ReportMetric(float64(plain.Microseconds())/float64(n), "plain-µs/call")
			b.ReportMetric(float64(live.Microseconds())/float64(n), "live-µs/call")
			b.ReportMetric(float64(resume.Microseconds())/float64(n), "resume-µs/call")
			b.ReportMetric(float64((live-plain).Microseconds())/float64(n), "journal-µs/call")
		})
	}
}
