package score

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/llm/usage"
	"github.com/tmc/langchaingo/llms"
)

// DefaultRubric is the judge's rubric when the spec names no rubric file:
// a text/template over Input's fields.
const DefaultRubric = `You are grading the answer a system gave to a question.

Question:
{{.Question}}

{{if .Reference}}Reference answer (taken to be correct):
{{.Reference}}
{{else}}No reference answer is given: judge the answer on the question alone.
{{end}}
Answer to grade:
{{.Answer}}

Decide whether the answer to grade is correct{{if .Reference}}, that is, whether it agrees in substance with the reference answer{{end}}. Ignore differences of wording, formatting, capitalisation and units written differently, and ignore extra explanation as long as the final answer is clear. An answer that is wrong, missing, hedges between several answers, or contradicts the reference is not correct. Give partial credit in the score only for an answer that is partly right (for example one of two required items).`

// verdictFormat is appended to every rendered rubric: it asks for the
// verdict as JSON, so a user's rubric need not.
const verdictFormat = `Reply with a JSON object and nothing else, in this form:
{"score": <a number from 0 to 1, 1 for fully correct>, "pass": <true or false>, "reason": "<one sentence saying why>"}`

// retryFeedback is the message sent after a reply without a readable
// verdict; %s says what was wrong with it.
const retryFeedback = `Your reply could not be read as the verdict (%s). Reply again with only the JSON object {"score": <0 to 1>, "pass": <true or false>, "reason": "<one sentence>"}.`

// cacheKeyVersion is mixed into every cache key; change it when the
// meaning of a cached verdict changes.
const cacheKeyVersion = "planner/eval/score judge v1"

// judge is the LLM-judge scorer.
type judge struct {
	name      string
	rubric    *template.Template
	model     llms.Model
	modelName string
	price     func(usage.Usage) float64
	cache     *cache // nil: no cache
	flight    flight
}

// newJudge builds a judge with the rubric in file rubricPath, or the
// default rubric when it is empty.
func newJudge(ctx context.Context, rubricPath string, opts Options) (*judge, error) {
	name, text, source := "judge", DefaultRubric, "the built-in rubric"
	if rubricPath != "" {
		b, err := os.ReadFile(rubricPath)
		if err != nil {
			return nil, fmt.Errorf("%w: judge rubric: %w", ErrBadSpec, err)
		}
		if strings.TrimSpace(string(b)) == "" {
			return nil, fmt.Errorf("%w: judge rubric %s is empty; write the grading instructions with {{.Question}}, {{.Answer}} and {{.Reference}}", ErrBadSpec, rubricPath)
		}
		name, text, source = "judge:"+baseName(rubricPath), string(b), rubricPath
	}
	if opts.JudgeModel == nil || strings.TrimSpace(opts.JudgeModelName) == "" {
		return nil, fmt.Errorf("%w: %s needs a judge model and its name (Options.JudgeModel, Options.JudgeModelName); configure one", ErrBadSpec, name)
	}
	tmplName := rubricPath
	if tmplName == "" {
		tmplName = "rubric"
	}
	tmpl, err := template.New(tmplName).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%w: judge rubric %s: %w", ErrBadSpec, source, err)
	}
	// A trial render finds references to fields Input lacks and a rubric
	// that never shows the answer.
	const probe = "\x00answer-probe\x00"
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, Input{Question: "q", Answer: probe, Reference: "r"}); err != nil {
		return nil, fmt.Errorf("%w: judge rubric %s: %w (the fields are .Question, .Answer, .Reference and .TaskID)", ErrBadSpec, source, err)
	}
	if !strings.Contains(buf.String(), probe) {
		return nil, fmt.Errorf("%w: judge rubric %s never shows the answer to grade; put {{.Answer}} in it", ErrBadSpec, source)
	}
	j := &judge{name: name, rubric: tmpl, model: opts.JudgeModel, modelName: opts.JudgeModelName, price: opts.Price}
	if opts.JudgeCache != "" {
		if j.cache, err = openCache(ctx, opts.JudgeCache); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadSpec, err)
		}
	}
	return j, nil
}

// Name returns "judge" or "judge:RUBRIC" (the rubric file's base name).
func (j *judge) Name() string { return j.name }

// Close closes the cache.
func (j *judge) Close() error {
	if j.cache == nil {
		return nil
	}
	return j.cache.Close()
}

// prompt renders the judge's prompt for in: the rubric followed by the
// verdict format.
func (j *judge) prompt(in Input) (string, error) {
	var b strings.Builder
	if err := j.rubric.Execute(&b, in); err != nil {
		return "", fmt.Errorf("%s: task %q: rendering the rubric: %w", j.name, in.TaskID, err)
	}
	return strings.TrimRight(b.String(), "\n") + "\n\n" + verdictFormat, nil
}

// Score asks the judge model for a verdict on in, or takes it from the
// cache.
func (j *judge) Score(ctx context.Context, in Input) (Verdict, error) {
	prompt, err := j.prompt(in)
	if err != nil {
		return Verdict{}, err
	}
	if j.cache == nil {
		return j.ask(ctx, in, prompt)
	}
	key := cacheKey(j.modelName, prompt)
	if v, ok, err := j.cache.get(ctx, key); err != nil || ok {
		return v, err
	}
	v, shared, err := j.flight.do(ctx, key, func() (Verdict, error) {
		v, err := j.ask(ctx, in, prompt)
		if err != nil {
			return Verdict{}, err
		}
		return v, j.cache.put(ctx, key, j.modelName, v)
	})
	if shared && err == nil {
		v.Cached = true
	}
	return v, err
}

// ask calls the model, once more with feedback when the first reply holds
// no readable verdict.
func (j *judge) ask(ctx context.Context, in Input, prompt string) (Verdict, error) {
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)}
	var (
		spent Usage
		why   []string
		reply string
	)
	for attempt := 1; attempt <= 2; attempt++ {
		resp, err := j.model.GenerateContent(ctx, msgs, llms.WithTemperature(0))
		spent = spent.Add(j.usageOf(resp))
		if err != nil {
			return Verdict{}, fmt.Errorf("%w: %s (%s): task %q: %w", ErrJudgeCall, j.name, j.modelName, in.TaskID, err)
		}
		reply = replyText(resp)
		v, perr := parseVerdict(reply)
		if perr == nil {
			v.Usage = spent
			return v, nil
		}
		why = append(why, perr.Error())
		msgs = append(msgs,
			llms.TextParts(llms.ChatMessageTypeAI, reply),
			llms.TextParts(llms.ChatMessageTypeHuman, fmt.Sprintf(retryFeedback, perr)))
	}
	return Verdict{}, fmt.Errorf("%w: %s (%s): task %q: asked twice: %s; last reply: %q",
		ErrJudgeReply, j.name, j.modelName, in.TaskID, strings.Join(why, "; then "), textutil.Clip(textutil.OneLine(reply), 200))
}

// usageOf counts one call: its tokens as the provider reported them and
// their price.
func (j *judge) usageOf(resp *llms.ContentResponse) Usage {
	u := Usage{Calls: 1}
	if r, ok := usage.FromResponse(resp); ok {
		u.PromptTokens, u.CompletionTokens = r.PromptTokens, r.CompletionTokens
		if j.price != nil {
			u.CostUSD = j.price(r)
		}
	}
	return u
}

// replyText is the text of a reply's first choice.
func replyText(resp *llms.ContentResponse) string {
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return ""
	}
	return resp.Choices[0].Content
}

// cacheKey addresses a verdict by the judge model's name and the prompt.
func cacheKey(model, prompt string) string {
	h := sha256.New()
	for _, s := range []string{cacheKeyVersion, model, prompt} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// parseVerdict reads the verdict out of a judge's reply: the first JSON
// object with a "score" or "pass" key, inside a fenced code block or in
// the text itself, prose around it ignored. A verdict with only a score
// passes from PassThreshold; one with only pass scores 1 or 0.
func parseVerdict(reply string) (Verdict, error) {
	if strings.TrimSpace(reply) == "" {
		return Verdict{}, errors.New("the reply is empty")
	}
	sawObject := false
	for _, text := range append(fencedBlocks(reply), reply) {
		for i := strings.IndexByte(text, '{'); i >= 0; {
			var obj map[string]any
			dec := json.NewDecoder(strings.NewReader(text[i:]))
			dec.UseNumber()
			if dec.Decode(&obj) == nil {
				sawObject = true
				_, hasScore := obj["score"]
				_, hasPass := obj["pass"]
				if hasScore || hasPass {
					return verdictFromMap(obj)
				}
			}
			next := strings.IndexByte(text[i+1:], '{')
			if next < 0 {
				break
			}
			i += 1 + next
		}
	}
	if sawObject {
		return Verdict{}, errors.New(`its JSON object has neither "score" nor "pass"`)
	}
	return Verdict{}, errors.New("it holds no JSON object")
}

// fencedBlocks returns the bodies of the Markdown code fences in s.
func fencedBlocks(s string) []string {
	var out []string
	for {
		start := strings.Index(s, "```")
		if start < 0 {
			return out
		}
		rest := s[start+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 && !strings.Contains(rest[:nl], "{") {
			rest = rest[nl+1:] // drop the language tag line
		}
		end := strings.Index(rest, "```")
		if end < 0 {
			return out
		}
		out = append(out, rest[:end])
		s = rest[end+3:]
	}
}

// verdictFromMap checks and converts a judge's JSON verdict, tolerating a
// score or pass written as a string.
func verdictFromMap(obj map[string]any) (Verdict, error) {
	var v Verdict
	score, hasScore := obj["score"]
	pass, hasPass := obj["pass"]
	if hasScore {
		f, err := toFloat(score)
		if err != nil {
			return Verdict{}, fmt.Errorf("score: %w", err)
		}
		if err := checkScore(f); err != nil {
			return Verdict{}, err
		}
		v.Score = f
	}
	if hasPass {
		b, err := toBool(pass)
		if err != nil {
			return Verdict{}, fmt.Errorf("pass: %w", err)
		}
		v.Pass = b
	}
	switch {
	case !hasScore && v.Pass:
		v.Score = 1
	case !hasPass:
		v.Pass = v.Score >= PassThreshold
	}
	if r, ok := obj["reason"]; ok && r != nil {
		s, isStr := r.(string)
		if !isStr {
			s = fmt.Sprint(r)
		}
		v.Reason = textutil.Clip(textutil.OneLine(s), 500)
	}
	return v, nil
}

// toFloat reads a JSON number, or a string holding one.
func toFloat(x any) (float64, error) {
	switch x := x.(type) {
	case json.Number:
		return x.Float64()
	case float64:
		return x, nil
	case string:
		return strconv.ParseFloat(strings.TrimSpace(x), 64)
	}
	return 0, fmt.Errorf("%v is not a number", x)
}

// toBool reads a JSON boolean, or a string saying true or false.
func toBool(x any) (bool, error) {
	switch x := x.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "pass":
			return true, nil
		case "false", "no", "fail":
			return false, nil
		}
	}
	return false, fmt.Errorf("%v is not true or false", x)
}

// flight runs one model call per cache key at a time: a caller asking for
// a key already being judged waits for that verdict instead of paying for
// its own.
type flight struct {
	mu    sync.Mutex
	calls map[string]*flightCall
}

type flightCall struct {
	done chan struct{}
	v    Verdict
	err  error
}

// do runs fn for key, or waits for the run already in flight; shared is
// true when the verdict came from another caller's run. A caller whose
// leader failed runs fn itself.
func (f *flight) do(ctx context.Context, key string, fn func() (Verdict, error)) (v Verdict, shared bool, err error) {
	f.mu.Lock()
	if c, ok := f.calls[key]; ok {
		f.mu.Unlock()
		select {
		case <-c.done:
			if c.err == nil {
				return c.v, true, nil
			}
			v, err := fn()
			return v, false, err
		case <-ctx.Done():
			return Verdict{}, false, context.Cause(ctx)
		}
	}
	if f.calls == nil {
		f.calls = make(map[string]*flightCall)
	}
	c := &flightCall{done: make(chan struct{})}
	f.calls[key] = c
	f.mu.Unlock()

	c.v, c.err = fn()
	f.mu.Lock()
	delete(f.calls, key)
	f.mu.Unlock()
	close(c.done)
	return c.v, false, c.err
}
