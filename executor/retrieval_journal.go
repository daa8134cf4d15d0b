package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/tools/retrieve"
)

// RetrievalJournalTool is the name under which a journaled run records
// each tool selection made with embeddings (tool_retrieval methods
// "embedding" and "hybrid"), as a call of a pseudo tool (journal kind
// "tool"): its input is the query, the tools already used and those the
// previous call showed; its output the selected names, one a line. A
// resumed run replays the recorded selection instead of embedding the
// query again, so its prompts are the journaled ones byte for byte even
// though a provider's embeddings may differ slightly from one request to
// the next. Selections made with BM25, which is deterministic, are not
// journaled.
const RetrievalJournalTool = "planner.tool_retrieval"

// RoleToolRetrieval is the CallMeta role of the embedding requests tool
// retrieval makes (their trace events are attributed to the node).
const RoleToolRetrieval = "tool_retrieval"

// Classes of a journaled selection that failed (journal.ToolResult.Class).
const (
	retrievalNoMatch = "no_match"
	retrievalFailed  = "failed"
)

// retrievalRequest is the input of a journaled selection.
type retrievalRequest struct {
	Query string   `json:"query"`
	Used  []string `json:"used,omitempty"`
	Shown []string `json:"shown,omitempty"`
}

// rankTools selects the tools of the next call for query: the previous
// selection when it still fits (stickTo), else the max_tools best plus
// used.
func (r *run) rankTools(ctx context.Context, query string, used []string) ([]string, error) {
	tr := r.l.retrieval
	ret, err := tr.retriever(ctx)
	if err != nil {
		return nil, err
	}
	names, err := r.stickTo(ctx, ret, query, used)
	if err == nil && names == nil {
		names, err = ret.Select(ctx, query, tr.s.maxTools, used)
	}
	return names, err
}

// journaledRank is rankTools, through ctx's journal when the loop ranks
// with embeddings (see RetrievalJournalTool): a replayed selection comes
// back from the journal, a failed one (the caller then shows every tool)
// with an error matching retrieve.ErrNoMatch when the live one did. The
// journal's own errors (journalStopped) end the run.
func (r *run) journaledRank(ctx context.Context, query string, used []string) ([]string, error) {
	ctx = withSelectionMemo(llm.WithCallMeta(ctx, llm.CallMeta{Node: r.caller.Node, Kind: r.caller.Kind, Role: RoleToolRetrieval}))
	j := journal.From(ctx)
	if j == nil || r.l.retrieval.embedder == nil {
		return r.rankTools(ctx, query, used)
	}
	input, err := json.Marshal(retrievalRequest{Query: query, Used: used, Shown: r.shown})
	if err != nil {
		return nil, fmt.Errorf("tool retrieval: encoding the journal request: %w", err)
	}
	var live []string
	var liveErr error
	res, err := j.Tool(ctx, r.caller.Node, RetrievalJournalTool, string(input), func(ctx context.Context) (journal.ToolResult, error) {
		live, liveErr = r.rankTools(ctx, query, used)
		if liveErr != nil {
			if ctx.Err() != nil {
				return journal.ToolResult{}, context.Cause(ctx)
			}
			class := retrievalFailed
			if errors.Is(liveErr, retrieve.ErrNoMatch) {
				class = retrievalNoMatch
			}
			return journal.ToolResult{Error: liveErr.Error(), Class: class}, nil
		}
		return journal.ToolResult{Output: strings.Join(live, "\n")}, nil
	})
	switch {
	case err != nil:
		// The journal could not admit or save the selection: the run
		// cannot go on without it (a resumed thread would diverge).
		return nil, &journalFailure{err: err}
	case liveErr != nil:
		return nil, liveErr
	case live != nil:
		return live, nil
	case res.Class == retrievalNoMatch:
		return nil, fmt.Errorf("%w (replayed from the journal)", retrieve.ErrNoMatch)
	case res.Error != "":
		return nil, errors.New(res.Error)
	case res.Output == "":
		return nil, fmt.Errorf("%w: the journal's tool selection is empty", journal.ErrCorrupt)
	}
	names := strings.Split(res.Output, "\n")
	for i, n := range names {
		t, ok := r.l.retrieval.reg.Resolve(n)
		if !ok {
			return nil, fmt.Errorf("%w: the journal's tool selection names %q, which the loop does not have", journal.ErrDiverged, n)
		}
		names[i] = t.Name() // the registered spelling the prompt and native tools use
	}
	return names, nil
}

// journalFailure is an error of the journal itself (admitting or saving
// a selection), which ends the run instead of making retrieval fall back.
type journalFailure struct{ err error }

func (e *journalFailure) Error() string { return "tool retrieval: " + e.err.Error() }
func (e *journalFailure) Unwrap() error { return e.err }

// journalStopped reports whether err is the journal's, which must end the
// run rather than make tool retrieval fall back.
func journalStopped(err error) bool {
	var jf *journalFailure
	return errors.As(err, &jf) || errors.Is(err, journal.ErrDiverged) || errors.Is(err, journal.ErrCorrupt) || errors.Is(err, journal.ErrSuspended)
}

// queryMemo is an embedder that embeds a query once per tool selection:
// one selection may rank the same query twice (stickTo, then Select), and
// journaledRank gives each selection a memo of its own in its context
// (withSelectionMemo). Documents, and queries outside a selection, pass
// through.
type queryMemo struct{ e retrieve.Embedder }

func newQueryMemo(e retrieve.Embedder) queryMemo { return queryMemo{e: e} }

// selectionMemo is one selection's query and its vector.
type selectionMemo struct {
	mu   sync.Mutex
	text string
	vec  []float32
}

type selectionMemoKey struct{}

// withSelectionMemo returns ctx carrying a new, empty selection memo.
func withSelectionMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, selectionMemoKey{}, &selectionMemo{})
}

func (q queryMemo) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return q.e.EmbedDocuments(ctx, texts)
}

func (q queryMemo) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	memo, _ := ctx.Value(selectionMemoKey{}).(*selectionMemo)
	if memo == nil {
		return q.e.EmbedQuery(ctx, text)
	}
	memo.mu.Lock()
	defer memo.mu.Unlock()
	if memo.vec != nil && memo.text == text {
		return memo.vec, nil
	}
	v, err := q.e.EmbedQuery(ctx, text)
	if err != nil {
		return nil, err
	}
	memo.text, memo.vec = text, v
	return v, nil
}
