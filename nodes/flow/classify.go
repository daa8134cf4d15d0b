package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/llms"
)

// ErrLabel means a classification's reply names none of the labels, or
// more than one.
var ErrLabel = errors.New("no valid label")

// classifyAttempts is how many replies a classification reads before it
// takes the default route: the first and one retry.
const classifyAttempts = 2

// runClassify asks the model for a label and returns it as the route; a
// reply that names no label is asked for again once, with the error fed
// back, and a second one takes the default route.
func (r *Router) runClassify(ctx context.Context, st *state.State) (string, error) {
	c := r.classify
	tr := trace.From(ctx)
	user, err := c.prompt.Render(st, map[string]any{"Labels": slices.Clone(c.labels)})
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", r.kind, r.id, err)
	}
	msgs := llm.Prompt(c.system, user)
	caller := llm.CallMeta{Node: r.id, Kind: r.kind}
	var last error
	for attempt := 1; attempt <= classifyAttempts; attempt++ {
		reply, _, err := c.model.Call(ctx, st, caller, msgs, c.opts...)
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", r.kind, r.id, err)
		}
		label, err := c.parse(reply)
		if err == nil {
			tr.Emit(trace.Event{Node: r.id, Kind: trace.KindDecision, Text: "route " + label + ": classified as " + label,
				Data: map[string]any{"route": label, "by": "classify", "attempt": attempt}})
			return label, nil
		}
		last = err
		tr.Emit(trace.Event{Node: r.id, Kind: trace.KindParseError, Text: "label rejected: " + err.Error(),
			Data: map[string]any{"attempt": attempt, "retries_left": classifyAttempts - attempt}})
		msgs = append(msgs, llm.Text(llms.ChatMessageTypeAI, reply),
			llm.Text(llms.ChatMessageTypeHuman, fmt.Sprintf(classifyFeedback, err, strings.Join(c.labels, ", "))))
	}
	st.NoteIncident(state.FailureParse)
	tr.Emit(trace.Event{Node: r.id, Kind: trace.KindGuard,
		Text: fmt.Sprintf("route %s (the default): no valid label after %d replies: %v", r.def, classifyAttempts, last),
		Data: map[string]any{"guard": GuardClassifyLabel, "route": r.def, "by": "default"}})
	return r.def, nil
}

// parse reads the label a reply names: the "label" of a JSON object in
// it (a JSON object without one names none), else the reply, one of its lines or what follows a line's last
// colon ("Label: math"), compared with the labels without regard to case,
// punctuation or the separators between words. Its error wraps ErrLabel.
func (c *classifier) parse(reply string) (string, error) {
	text := strings.TrimSpace(reply)
	if text == "" {
		return "", fmt.Errorf("%w: the reply is empty", ErrLabel)
	}
	if v, isJSON, ok := jsonLabel(text); isJSON {
		if !ok {
			return "", fmt.Errorf("%w: the JSON reply has no string \"label\"", ErrLabel)
		}
		if i := slices.Index(c.norm, normLabel(v)); i >= 0 {
			return c.labels[i], nil
		}
		return "", fmt.Errorf("%w: %q is not one of the labels (%s)", ErrLabel, textutil.Clip(v, 80), strings.Join(c.labels, ", "))
	}
	candidates := []string{text}
	for _, line := range strings.Split(text, "\n") {
		candidates = append(candidates, line)
		if i := strings.LastIndexByte(line, ':'); i >= 0 {
			candidates = append(candidates, line[i+1:])
		}
	}
	var found []string
	for _, cand := range candidates {
		if i := slices.Index(c.norm, normLabel(cand)); i >= 0 && !slices.Contains(found, c.labels[i]) {
			found = append(found, c.labels[i])
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("%w: %q names none of the labels (%s)", ErrLabel, textutil.Clip(textutil.OneLine(text), 120), strings.Join(c.labels, ", "))
	default:
		return "", fmt.Errorf("%w: the reply names several labels (%s); name one", ErrLabel, strings.Join(found, ", "))
	}
}

// jsonLabel reads the JSON object that spans from the reply's first '{'
// to its last '}' (a fenced block, or prose around it, is left out):
// isJSON says whether there is one, ok whether it has a string "label"
// (the key matched without regard to case), label is its value.
func jsonLabel(text string) (label string, isJSON, ok bool) {
	i, j := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if i < 0 || j < i {
		return "", false, false
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(text[i:j+1]), &obj); err != nil {
		return "", false, false
	}
	for k, v := range obj {
		if strings.EqualFold(k, "label") {
			s, ok := v.(string)
			return s, true, ok
		}
	}
	return "", true, false
}

// normLabel folds s for comparing labels: lower case, every run of
// characters other than letters and digits one space, trimmed.
func normLabel(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}
