package executor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/planner-engine/planner/executor/parse"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/tmc/langchaingo/llms"
)

// Guard names of the completion style's trace events (kind guard).
const (
	// GuardActionOnly: the reply had no "\nAction i: " to split it at, so
	// the thought's first line was kept and the model was asked for the
	// action alone (the paper's harness counted these as bad calls).
	GuardActionOnly = "action_only"
	// GuardInvalidAction: the action was not Tool[input] with a known tool
	// or Finish; its observation is "Invalid action: ...", as WikiEnv's.
	GuardInvalidAction = "invalid_action"
)

// InvalidAction formats the observation of an action that is not
// Tool[input] with a known tool or Finish[answer] (completion style): the
// action with its first letter lower-cased, as the paper's harness passed
// it to WikiEnv and WikiEnv answered.
const InvalidAction = "Invalid action: %s"

// The labels of the paper's steps; %d is the step number.
const (
	thoughtLabel     = "Thought %d:"
	actionSplit      = "\nAction %d: "
	actionLabel      = "Action %d:"
	observationLabel = "Observation %d:"
)

// completionTurn runs step n as the paper's harness did: the model
// continues the prompt after "Thought n:" until "\nObservation n:"; the
// reply splits at "\nAction n: " into the thought and the action, or else
// the first line is the thought and a second call, stopped at the end of
// its line, gives the action; Finish[answer] ends the run, Tool[input]
// runs the tool with the input verbatim, anything else is an invalid
// action; the observation loses its literal backslash-n sequences.
func (r *run) completionTurn(ctx context.Context, n int, opts []llms.CallOption) (bool, *halt, error) {
	prompt := r.header + r.completionSteps(true)
	reply, err := r.complete(ctx, prompt+fmt.Sprintf(thoughtLabel, n), []string{"\n" + fmt.Sprintf(observationLabel, n)}, opts)
	if err != nil {
		return false, nil, fmt.Errorf("react step %d: %w", n, err)
	}
	r.out.Iterations++
	text, invented := cutAtObservation(reply, n)
	if invented {
		r.guard("invented_observation", n, "cut an Observation the model wrote itself, and everything after it", nil)
	}
	thought, action, ok := splitStep(text, n)
	if !ok {
		second, err := r.complete(ctx, prompt+fmt.Sprintf(thoughtLabel+" %s\n"+actionLabel, n, thought, n), []string{"\n"}, opts)
		if err != nil {
			return false, nil, fmt.Errorf("react step %d (action): %w", n, err)
		}
		action = actionLine(second, n)
		r.guard(GuardActionOnly, n, fmt.Sprintf("no %q in the reply; kept its first line as the thought and asked for the action alone", strings.TrimPrefix(fmt.Sprintf(actionSplit, n), "\n")),
			map[string]any{"raw": textutil.Clip(reply, 500), "action": action})
	}
	r.thought(n, thought, nil)
	s := &step{n: n, kind: stepAction, thought: thought, action: action}
	name, input, ok := readAction(action)
	if ok && parse.NormalizeToolName(name) == "finish" {
		r.final = s
		r.out.Answer = input
		r.out.Entries = append(r.out.Entries, state.Entry{Thought: thought, Final: input, Raw: reply})
		return true, nil, nil
	}
	c := &call{name: name, input: input}
	s.calls = []*call{c}
	if ok {
		r.resolve(n, c)
	}
	if c.tc.Tool == nil {
		c.obs = paperObservation(fmt.Sprintf(InvalidAction, lowerFirst(action)))
		c.guard = c.obs
		r.guard(GuardInvalidAction, n, c.obs, map[string]any{"action": action})
		// The harness fed this text back as the step's observation; the
		// trace records it as one, so a replay check that compares
		// observation events sees every step.
		r.emit(trace.KindObservation, c.obs, map[string]any{"step": n, "invalid_action": action})
	} else {
		c.tc.Announce(ctx)
		res, err := c.tc.Run(ctx, r.st)
		if err != nil {
			return false, nil, err
		}
		res.Observation = paperObservation(res.Observation)
		c.tc.Report(ctx, res)
		c.observe(res)
	}
	// No repeat guard: the harness had none, and WikiEnv answers a
	// repeated call as it will (a repeated Lookup pages on).
	r.steps = append(r.steps, s)
	r.out.Entries = append(r.out.Entries, entryOf(thought, c, reply))
	return false, nil, nil
}

// complete sends prompt as one user message with the stop words and the
// loop's sampling options, and returns the reply's text (from any choice,
// as ask reads it). Empty replies are not retried (not even by
// llm.Model.Call): the harness's action-only call follows instead.
func (r *run) complete(ctx context.Context, prompt string, stops []string, opts []llms.CallOption) (string, error) {
	model := r.l.model
	model.EmptyRetries = 0
	callOpts := append(slices.Clip(r.l.finOpts), llms.WithStopWords(stops))
	callOpts = append(callOpts, opts...)
	text, resp, err := model.Call(ctx, r.st, r.caller, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)}, callOpts...)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(text) == "" && resp != nil {
		for _, ch := range resp.Choices {
			if ch != nil && strings.TrimSpace(ch.Content) != "" {
				return ch.Content, nil
			}
		}
	}
	return text, nil
}

// cutAtObservation cuts what a provider that ignores stop words wrote
// from "\nObservation n:" on, and then any line that starts with an
// Observation label (parse.CutObservation); it reports whether it cut.
func cutAtObservation(reply string, n int) (string, bool) {
	text, _, cut := strings.Cut(reply, "\n"+fmt.Sprintf(observationLabel, n))
	kept, more := parse.CutObservation(text)
	return kept, cut || more
}

// splitStep splits a step's reply as the paper's harness did: stripped,
// it must split at "\nAction n: " into exactly two parts, the thought and
// the action. Otherwise ok is false and thought is the first line. A
// leading "Thought n:" (or "Thought:") label, which chat models repeat,
// is dropped first.
func splitStep(reply string, n int) (thought, action string, ok bool) {
	text := strings.TrimSpace(reply)
	text = dropLabel(text, "thought", n)
	if parts := strings.Split(text, fmt.Sprintf(actionSplit, n)); len(parts) == 2 {
		return parts[0], parts[1], true
	}
	first, _, _ := strings.Cut(text, "\n")
	return first, "", false
}

// actionLine reads the reply of the action-only call: its first line,
// stripped, without a leading "Action n:" label.
func actionLine(reply string, n int) string {
	line, _, _ := strings.Cut(strings.TrimLeftFunc(reply, unicode.IsSpace), "\n")
	return dropLabel(strings.TrimSpace(line), "action", n)
}

// dropLabel removes a leading "Word n:" or "Word:" (word in lower case,
// matched case-insensitively) from text, and the blanks after it.
func dropLabel(text, word string, n int) string {
	if len(text) < len(word) || !strings.EqualFold(text[:len(word)], word) {
		return text
	}
	rest := strings.TrimLeft(text[len(word):], " ")
	rest = strings.TrimPrefix(rest, fmt.Sprint(n))
	if after, ok := strings.CutPrefix(rest, ":"); ok {
		return strings.TrimSpace(after)
	}
	return text
}

// readAction reads an action as WikiEnv did: a name, then "[", the
// input, and "]" as the action's last character; the input runs from the
// first "[" to that last "]", and is trimmed. The name may not be empty
// or hold white space.
func readAction(action string) (name, input string, ok bool) {
	a := strings.TrimSpace(action)
	i := strings.IndexByte(a, '[')
	if i <= 0 || !strings.HasSuffix(a, "]") || len(a)-1 <= i || strings.ContainsFunc(a[:i], unicode.IsSpace) {
		return "", "", false
	}
	return a[:i], strings.TrimSpace(a[i+1 : len(a)-1]), true
}

// lowerFirst lower-cases the first character of s, as the harness did to
// every action before passing it to WikiEnv.
func lowerFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 || r == utf8.RuneError {
		return s
	}
	return string(unicode.ToLower(r)) + s[size:]
}

// paperObservation removes the literal backslash-n sequences from an
// observation, as the harness did (in Python, obs.replace with the
// two-character string backslash-n and an empty string); real line
// breaks stay.
func paperObservation(obs string) string {
	return strings.ReplaceAll(obs, `\n`, "")
}

// completionSteps renders the steps as the harness appended them to its
// prompt: "Thought n: ...\nAction n: ...\nObservation n: ...\n" each, the
// action exactly as the model wrote it. With compact, the observations of
// steps outside the last KeepSteps are elided as in chat style.
func (r *run) completionSteps(compact bool) string {
	var b strings.Builder
	n := len(r.steps)
	for i, s := range r.steps {
		obs := ""
		if len(s.calls) > 0 {
			obs = r.l.content(s, s.calls[0], compact && r.l.old(i, n), false)
		}
		fmt.Fprintf(&b, thoughtLabel+" %s\n"+actionLabel+" %s\n"+observationLabel+" %s\n", s.n, s.thought, s.n, s.action, s.n, obs)
	}
	return b.String()
}
