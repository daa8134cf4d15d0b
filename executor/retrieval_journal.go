package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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
	ranked, err := ret.Rank(ctx, query, tr.s.maxTools+len(used))
	if err != nil {
		return nil, err
	}
	if names := r.stickTo(ranked, used); names != nil {
		return names, nil
	}
	return ret.SelectRanked(ranked, tr.s.maxTools, used), nil
}

// journaledRank is rankTools, through ctx's journal when the loop ranks
// with embeddings (see RetrievalJournalTool): a replayed selection comes
// back from the journal, a failed one (the caller then shows every tool)
// with an error matching retrieve.ErrNoMatch when the live one did. The
// journal's own errors (journalStopped) end the run.
func (r *run) journaledRank(ctx context.Context, query string, used []string) ([]string, error) {
	ctx = llm.WithCallMeta(ctx, llm.CallMeta{Node: r.caller.Node, Kind: r.caller.Kind, Role: RoleToolRetrieval})
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
	return errors.As(err, &jf) || journal.Stopped(err)
}
