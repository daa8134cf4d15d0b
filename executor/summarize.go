package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dustin/go-humanize"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/keyword"
	"github.com/tmc/langchaingo/llms"
)

// RoleSummarize is the role of the model call that summarizes a block of
// steps (compaction "summarize"), in llm.CallMeta and trace events.
const RoleSummarize = "summarize"

// GuardSummaryFailed names the guard event of a summary call that failed
// or came back empty: its block was elided instead, as compaction "block"
// does, and the next compaction summarizes it again.
const GuardSummaryFailed = "summary_failed"

// summarizeSpec declares the summary call's template.
func summarizeSpec() nodekind.TemplateSpec {
	return nodekind.TemplateSpec{
		Key: "summarize_prompt",
		Extra: []nodekind.Field{
			{Name: "Task", Doc: "the task, as in `prompt`", Sample: "Compute 17 * 23 + 4"},
			{Name: "Summary", Doc: "the summary of the steps before these, or empty", Sample: "The calculator gave 17 * 23 = 391."},
			{Name: "Steps", Doc: "the steps to summarize, as text, observations in full", Sample: "Thought: ...\nAction: calculator\nAction Input: 391+4\nObservation: 395"},
		},
	}
}

// summaryData is the summary template's .Extra.
func summaryData(task, summary, steps string) map[string]any {
	return map[string]any{"Task": task, "Summary": summary, "Steps": steps}
}

// summarize replaces steps [r.summarized, end) with a summary the model
// writes, merged with the one before. A call that fails as a model call
// (llm.ErrModel) or comes back empty leaves the summary as it was: the
// block is then only elided (r.compacted moves, r.summarized does not)
// and a guard event says so. Other errors (ctx, budget, journal) end the
// turn.
func (r *run) summarize(ctx context.Context, end int) error {
	from := r.summarized
	steps := r.blockText(from, end)
	user, err := r.l.summary.Render(r.st, summaryData(r.in.Task, r.summary, steps))
	if err != nil {
		return err
	}
	caller := r.caller
	caller.Role = RoleSummarize
	opts := append(append([]llms.CallOption(nil), r.l.finOpts...), llms.WithMaxTokens(r.l.s.summaryTokens))
	text, _, err := r.l.model.Call(ctx, r.st, caller, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, strings.TrimSpace(user))}, opts...)
	first, last := r.steps[from].n, r.steps[end-1].n
	data := map[string]any{"mode": CompactionSummarize, "from_step": first, "to_step": last}
	switch {
	case err != nil && !errors.Is(err, llm.ErrModel):
		return fmt.Errorf("react summary of steps %d-%d: %w", first, last, err)
	case err != nil:
		r.guard(GuardSummaryFailed, last, fmt.Sprintf("the summary of steps %d-%d failed (%v); their observations were elided instead", first, last, err), data)
		return nil
	}
	text = cleanSummary(text)
	if text == "" {
		r.guard(GuardSummaryFailed, last, fmt.Sprintf("the summary of steps %d-%d came back empty; their observations were elided instead", first, last), data)
		return nil
	}
	before := utf8.RuneCountInString(r.summary) + utf8.RuneCountInString(steps)
	r.summary, r.summarized = text, end
	data["chars_before"], data["chars_after"] = before, utf8.RuneCountInString(text)
	r.guard("compaction", last, fmt.Sprintf("summarized steps %d-%d (%s chars) in %s chars", first, last,
		humanize.Comma(int64(before)), humanize.Comma(int64(utf8.RuneCountInString(text)))), data)
	r.headState() // the summarized steps' state blocks leave with them
	return r.renderHead()
}

// summaryLabel matches a leading "Summary:" a model may write.
var summaryLabel = regexp.MustCompile(`(?i)^\s*(summary|摘要)\s*[:：]\s*`)

// cleanSummary trims a summary reply and drops a leading label.
func cleanSummary(text string) string {
	return strings.TrimSpace(summaryLabel.ReplaceAllString(strings.TrimSpace(text), ""))
}

// blockText renders steps [from, end) for the summary call: each action
// with its observation in full (as the model saw it before compaction),
// format errors left out.
func (r *run) blockText(from, end int) string {
	l := r.l
	var b strings.Builder
	for _, s := range r.steps[from:end] {
		if s.kind != stepAction {
			continue
		}
		for k, c := range s.calls {
			thought := s.thought
			if k > 0 {
				thought = ""
			}
			fmt.Fprintf(&b, "[step %d]\n", s.n)
			b.WriteString(l.assistantText(thought, c))
			b.WriteString("\n" + l.lb.observation + l.content(s, c, false, true) + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// summaryBlock is the text added to the task message once a summary
// exists: a heading naming the steps it covers, then the summary.
func (r *run) summaryBlock() string {
	if r.summary == "" || r.summarized == 0 {
		return ""
	}
	last := r.steps[r.summarized-1].n
	heading := fmt.Sprintf(r.l.lb.summary, last)
	if r.l.s.recall {
		heading += " " + r.l.lb.summaryRecall
	}
	return heading + "\n" + r.summary
}

// RecallToolName is the name of the loop's recall tool (ReActConfig.Recall).
const RecallToolName = "recall"

// ErrRecallOutsideRun means the recall tool was called outside a ReAct
// run (for example by `planner tools call`): it reads the run's own
// observations, so there is nothing to recall.
var ErrRecallOutsideRun = errors.New("recall: there is no run to recall from; the tool works only inside a ReAct loop")

// recallPage is how many characters of an observation one recall shows.
const recallPage = 1500

// recalled is one earlier tool call a recall can fetch back.
type recalled struct {
	step        int
	tool, input string
	// output is the tool's whole output (or its error message).
	output string
}

// recallView is the immutable list of the run's tool calls so far that a
// turn's recall calls read.
type recallView struct{ calls []recalled }

// RecallTool returns the recall tool a loop adds with ReActConfig.Recall,
// without a keyword index (a search by words fails with
// ErrNoKeywordIndex; a loop's own has its env's). Outside a loop's run it
// fails with ErrRecallOutsideRun.
func RecallTool() tools.Tool { return recallTool{} }

// newRecallTool returns the recall tool of a loop built with env: it
// searches with env.Keywords, and fails with a setting error wrapping
// ErrNoKeywordIndex when env has none.
func newRecallTool(env nodekind.Env) (tools.Tool, error) {
	if env.Keywords == nil {
		return nil, &config.SettingError{Key: "recall", Err: fmt.Errorf(
			"%w: %w: the recall tool searches the run's earlier tool outputs with a BM25 keyword index, and this engine has none; %s, or set recall: false",
			config.ErrSettings, ErrNoKeywordIndex, keywordIndexFix)}
	}
	return recallTool{index: env.Keywords}, nil
}

// recallTool is the loop's recall tool. The loop's registry holds it
// without a view; each call a run resolves gets a copy bound to the run's
// calls as of the turn's start (run.resolve), so concurrent runs and
// forked branches each see their own.
type recallTool struct {
	// index builds the keyword index a search by words ranks with.
	index keyword.Indexer
	// view is what the call reads; nil outside a loop's run.
	view *recallView
}

func (recallTool) Name() string { return RecallToolName }

func (recallTool) Description() string {
	return "Fetches back the full output of an earlier tool call of this run, including details that were summarized or elided from the conversation. " +
		`Input: a step number (e.g. 3, or {"step": 3, "from": 1500} to read on from a character offset), or words to search for in all earlier outputs.`
}

func (recallTool) Schema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"step":  map[string]any{"type": "integer", "description": "the step whose output to fetch"},
			"from":  map[string]any{"type": "integer", "description": "character offset to read on from (default 0)"},
			"query": map[string]any{"type": "string", "description": "words to search for in all earlier outputs"},
		},
	}
}

func (recallTool) Meta() tools.Meta { return tools.Meta{ReadOnly: true} }

// recallInput is a parsed recall request: a step (with an offset) or a
// query.
type recallInput struct {
	Step  int    `json:"step"`
	From  int    `json:"from"`
	Query string `json:"query"`
}

var stepRef = regexp.MustCompile(`(?i)^\s*(?:step|observation|#)?\s*(\d+)\s*$`)

func parseRecall(input string) (recallInput, error) {
	input = strings.TrimSpace(input)
	if strings.HasPrefix(input, "{") {
		var in recallInput
		if err := json.Unmarshal([]byte(input), &in); err != nil {
			return in, fmt.Errorf("%w: recall input is not valid JSON: %v", tools.ErrBadInput, err)
		}
		if in.Step <= 0 && strings.TrimSpace(in.Query) == "" {
			return in, fmt.Errorf("%w: recall needs a positive \"step\" or a \"query\"", tools.ErrBadInput)
		}
		if in.From < 0 {
			return in, fmt.Errorf("%w: recall \"from\" must not be negative, got %d", tools.ErrBadInput, in.From)
		}
		return in, nil
	}
	if m := stepRef.FindStringSubmatch(input); m != nil {
		n, err := strconv.Atoi(m[1])
		if err == nil && n > 0 {
			return recallInput{Step: n}, nil
		}
	}
	if input == "" {
		return recallInput{}, fmt.Errorf("%w: recall needs a step number or words to search for", tools.ErrBadInput)
	}
	return recallInput{Query: input}, nil
}

func (t recallTool) Call(ctx context.Context, input string) (string, error) {
	v := t.view
	if v == nil {
		return "", ErrRecallOutsideRun
	}
	in, err := parseRecall(input)
	if err != nil {
		return "", err
	}
	if len(v.calls) == 0 {
		return "No earlier tool output in this run yet.", nil
	}
	if in.Step > 0 {
		return v.step(in.Step, in.From)
	}
	return v.search(ctx, t.index, in.Query)
}

// step returns step n's outputs from character offset from.
func (v *recallView) step(n, from int) (string, error) {
	var b strings.Builder
	found, longest := false, 0
	for _, c := range v.calls {
		if c.step != n {
			continue
		}
		found = true
		out := []rune(c.output)
		longest = max(longest, len(out))
		if from > 0 && from >= len(out) {
			continue // a shorter output of the same step was shown whole before
		}
		end := min(from+recallPage, len(out))
		fmt.Fprintf(&b, "[step %d] %s(%s), characters %d-%d of %d:\n%s\n", n, c.tool, textutil.Clip(c.input, 80), from, end, len(out), string(out[from:end]))
		if end < len(out) {
			fmt.Fprintf(&b, "(more: recall {\"step\": %d, \"from\": %d})\n", n, end)
		}
	}
	if found && b.Len() == 0 {
		return "", fmt.Errorf("%w: step %d's output has %d characters; \"from\" %d is past its end", tools.ErrBadInput, n, longest, from)
	}
	if b.Len() == 0 {
		steps := make([]string, 0, len(v.calls))
		for _, c := range v.calls {
			steps = append(steps, strconv.Itoa(c.step))
		}
		return "", fmt.Errorf("%w: no tool call in step %d; steps with tool output: %s", tools.ErrBadInput, n, strings.Join(slices.Compact(steps), ", "))
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// search finds the outputs that best match q (BM25, with an index that
// ix builds) and shows a passage of each.
func (v *recallView) search(ctx context.Context, ix keyword.Indexer, q string) (string, error) {
	if ix == nil {
		return "", fmt.Errorf("recall: %w: a search by words needs one; recall a step by its number instead", ErrNoKeywordIndex)
	}
	docs := make([]keyword.Document, len(v.calls))
	for i, c := range v.calls {
		docs[i] = keyword.Document{ID: strconv.Itoa(i), Title: c.tool + " " + c.input, Text: c.output}
	}
	idx, err := ix.Index(ctx, docs)
	if err != nil {
		return "", fmt.Errorf("recall: %w", err)
	}
	defer idx.Close()
	hits, err := idx.Search(ctx, q, 3, 400)
	if err != nil {
		return "", fmt.Errorf("recall: %w", err)
	}
	if len(hits) == 0 {
		return fmt.Sprintf("Nothing in this run's earlier tool outputs matches %q. Recall a step by its number to read it whole.", q), nil
	}
	var b strings.Builder
	for _, h := range hits {
		i, _ := strconv.Atoi(h.ID)
		c := v.calls[i]
		fmt.Fprintf(&b, "[step %d] %s(%s): %s\n", c.step, c.tool, textutil.Clip(c.input, 80), h.Passage)
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// snapshotRecall sets r.recall to the run's tool calls so far, which the
// turn's recall calls read.
func (r *run) snapshotRecall() {
	if !r.l.s.recall {
		return
	}
	v := &recallView{}
	for _, s := range r.steps {
		for _, c := range s.calls {
			if c.tc.Tool == nil || tools.NormalizeName(c.toolName()) == RecallToolName {
				continue
			}
			v.calls = append(v.calls, recalled{step: s.n, tool: c.toolName(), input: c.input, output: c.full})
		}
	}
	r.recall = v
}
