package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/state"
)

// The OpenAI-compatible endpoint (docs/openai-endpoint.md): GET /v1/models
// lists the pipelines as models, and POST /v1/chat/completions runs one
// through the server's run machinery (slots, pipeline cache, scrubber,
// --llm), answering in the chat completion shape.

// OpenAIError is the error body of the /v1 endpoints, in OpenAI's shape.
type OpenAIError struct {
	Error OpenAIErrorDetail `json:"error"`
}

// OpenAIErrorDetail says what went wrong: Type is the error class
// (invalid_request_error, ...), Param the request field at fault, Code the
// server's error code (see ErrorDetail.Code).
type OpenAIErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

// ChatMessage is one message of a chat completion request. Content is a
// string, or an array of parts of which the text parts are read.
type ChatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// ChatRequest is the body of POST /v1/chat/completions. Fields it does not
// name (temperature, max_tokens, n, ...) are ignored: the pipeline's own
// settings apply. Tools and functions are refused (400).
type ChatRequest struct {
	// Model names the pipeline, as RunRequest.Config does.
	Model    string        `json:"model"`
	Messages []ChatMessage `json:"messages"`
	Stream   bool          `json:"stream,omitempty"`
	// StreamOptions.IncludeUsage asks for a usage chunk before [DONE].
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`
	Tools        json.RawMessage `json:"tools,omitempty"`
	ToolChoice   json.RawMessage `json:"tool_choice,omitempty"`
	Functions    json.RawMessage `json:"functions,omitempty"`
	FunctionCall json.RawMessage `json:"function_call,omitempty"`
}

// chatUsage is the usage object of a chat completion.
type chatUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// chatChoice is a choice of a completion (Message) or of a chunk (Delta).
type chatChoice struct {
	Index        int             `json:"index"`
	Message      *chatOutMessage `json:"message,omitempty"`
	Delta        *chatOutMessage `json:"delta,omitempty"`
	FinishReason *string         `json:"finish_reason"`
}

type chatOutMessage struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content"`
}

// chatCompletion is a completion or one chunk of a streamed one.
type chatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *chatUsage   `json:"usage,omitempty"`
}

// failOpenAI answers err in OpenAI's error shape, scrubbed.
func (s *Server) failOpenAI(w http.ResponseWriter, r *http.Request, err error, param string) {
	err = modelError(err)
	code, name := errorStatus(err)
	typ := "invalid_request_error"
	switch {
	case code == http.StatusUnauthorized:
		typ = "authentication_error"
	case code == http.StatusForbidden:
		typ = "permission_error"
	case code == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case code >= 500:
		typ = "server_error"
	}
	var de *detailedError
	if param == "" && errors.As(err, &de) {
		if m, ok := de.details.(map[string]string); ok {
			param = m["field"]
		}
	}
	body := OpenAIError{Error: OpenAIErrorDetail{Message: err.Error(), Type: typ, Code: name}}
	if param != "" {
		body.Error.Param = &param
	}
	s.writeJSON(w, r, code, body)
}

// listModels answers GET /v1/models: every pipeline that loads, as a model.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	files, err := s.pipelineFiles()
	if err != nil {
		s.failOpenAI(w, r, err, "")
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	data := []model{}
	seen := map[string]bool{}
	for _, f := range files {
		pi := info(f)
		if pi.Error != "" || pi.Name == "" || seen[pi.Name] {
			continue
		}
		seen[pi.Name] = true
		var created int64
		if st, err := os.Stat(f); err == nil {
			created = st.ModTime().Unix()
		}
		data = append(data, model{ID: pi.Name, Object: "model", Created: created, OwnedBy: "planner"})
	}
	s.writeJSON(w, r, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// pipelineNames returns the names of the pipelines that load.
func (s *Server) pipelineNames() []string {
	files, _ := s.pipelineFiles()
	var names []string
	for _, f := range files {
		if pi := info(f); pi.Error == "" && pi.Name != "" {
			names = append(names, pi.Name)
		}
	}
	return names
}

// messageText returns a message's text: its string content, or its text
// parts joined by newlines.
func messageText(m ChatMessage) (string, error) {
	raw := bytes.TrimSpace(m.Content)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		return str, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("%w: message content must be a string or an array of text parts", ErrBadRequest)
	}
	var texts []string
	for _, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("%w: message content part of type %q: only text parts are supported", ErrBadRequest, p.Type)
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n"), nil
}

// chatPrompt splits the messages into the question (the last user
// message), the conversation's earlier turns (the thread's history: each
// user message with the assistant's reply after it) and the task the run
// gets: the question, after the system and developer messages' text when
// there are any ("System: ...", a line each, then a blank line).
func chatPrompt(msgs []ChatMessage) (question, prompt string, history state.History, err error) {
	last := -1
	for i, m := range msgs {
		if m.Role == "user" {
			last = i
		}
	}
	if last < 0 {
		return "", "", nil, withDetails(fmt.Errorf("%w: messages must hold a user message: its text is the question the pipeline answers", ErrBadRequest), map[string]string{"field": "messages"})
	}
	var sys strings.Builder
	for i, m := range msgs[:last+1] {
		text, err := messageText(m)
		if err != nil {
			return "", "", nil, withDetails(fmt.Errorf("messages[%d]: %w", i, err), map[string]string{"field": "messages"})
		}
		if i == last {
			question = text
			break
		}
		switch m.Role {
		case "system", "developer":
			if strings.TrimSpace(text) != "" {
				fmt.Fprintf(&sys, "System: %s\n", text)
			}
		case "user":
			history = append(history, state.Turn{Question: text})
		case "assistant":
			if n := len(history); n > 0 && history[n-1].Answer == "" {
				history[n-1].Answer = text
			} else {
				history = append(history, state.Turn{Answer: text})
			}
		case "tool", "function":
			return "", "", nil, withDetails(fmt.Errorf("%w: messages[%d] has role %q: tool calls are not supported by this endpoint", ErrBadRequest, i, m.Role), map[string]string{"field": "messages"})
		default:
			return "", "", nil, withDetails(fmt.Errorf("%w: messages[%d] has role %q: use system, user or assistant", ErrBadRequest, i, m.Role), map[string]string{"field": "messages"})
		}
	}
	if strings.TrimSpace(question) == "" {
		return "", "", nil, withDetails(fmt.Errorf("%w: the last user message is empty: it is the question the pipeline answers", ErrBadRequest), map[string]string{"field": "messages"})
	}
	if sys.Len() == 0 {
		return question, question, history, nil
	}
	return question, sys.String() + "\n" + question, history, nil
}

// chatCompletions answers POST /v1/chat/completions: it starts a run of
// the pipeline Model names on the last user message, as POST /api/runs
// does, waits for it (a client that goes away cancels it) and answers its
// answer as a chat completion, or as a stream of chunks.
func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !isJSON(ct) {
		s.failOpenAI(w, r, fmt.Errorf("%w: Content-Type must be application/json, got %q", ErrBadRequest, ct), "")
		return
	}
	body, err := readBody(r)
	if err != nil {
		s.failOpenAI(w, r, err, "")
		return
	}
	var req ChatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.failOpenAI(w, r, fmt.Errorf("%w: invalid JSON body: %w", ErrBadRequest, err), "")
		return
	}
	for name, v := range map[string]json.RawMessage{"tools": req.Tools, "tool_choice": req.ToolChoice, "functions": req.Functions, "function_call": req.FunctionCall} {
		if t := bytes.TrimSpace(v); len(t) > 0 && string(t) != "null" && string(t) != "[]" && string(t) != `"none"` {
			s.failOpenAI(w, r, fmt.Errorf("%w: %s: tool calls are not supported: a pipeline runs its own tools (its YAML's tools:); leave %s out", ErrBadRequest, name, name), name)
			return
		}
	}
	if req.Model == "" {
		s.failOpenAI(w, r, fmt.Errorf("%w: model is required: name a pipeline (GET /v1/models lists them)", ErrBadRequest), "model")
		return
	}
	question, prompt, history, err := chatPrompt(req.Messages)
	if err != nil {
		s.failOpenAI(w, r, err, "")
		return
	}
	path, err := s.pipelinePath(req.Model)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			names := s.pipelineNames()
			err = fmt.Errorf("%w: no model %q: models are the pipelines of %s (%sGET /v1/models lists them: %s)",
				ErrNotFound, req.Model, s.cfg.Dir, config.DidYouMean(req.Model, names), strings.Join(names, ", "))
		}
		s.failOpenAI(w, r, err, "model")
		return
	}
	rn, err := s.startChatRun(r.Context(), path, question, prompt, history)
	if err != nil {
		s.failOpenAI(w, r, err, "")
		return
	}
	id := "chatcmpl-" + rn.id
	created := time.Now().Unix()
	if req.Stream {
		s.streamChat(w, r, rn, id, req.Model, created, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		return
	}
	v, err := waitRun(r.Context(), rn)
	if err != nil {
		return // the client is gone; the run was cancelled
	}
	if v.Status == string(journal.StatusFailed) || v.Status == string(journal.StatusInterrupted) || v.Status == string(journal.StatusWaiting) {
		s.failOpenAI(w, r, runFailure(v), "")
		return
	}
	finish := finishReason(v)
	s.writeJSON(w, r, http.StatusOK, chatCompletion{ID: id, Object: "chat.completion", Created: created, Model: req.Model,
		Choices: []chatChoice{{Message: &chatOutMessage{Role: "assistant", Content: v.Answer}, FinishReason: &finish}}, Usage: usageOf(v)})
}

// runFailure is the error a run that gave no answer answers with.
func runFailure(v RunView) error {
	msg := cmp.Or(v.Error, v.Failure, v.Reason, "the run ended "+v.Status+" without an answer")
	if v.Status == string(journal.StatusWaiting) {
		return fmt.Errorf("%w: run %s (thread %s) waits for a tool call's approval: decide it with POST /api/approvals/%s", ErrConflict, v.ID, v.Thread, v.Thread)
	}
	return fmt.Errorf("run %s (thread %s) %s: %s", v.ID, v.Thread, v.Status, msg)
}

// finishReason is "stop" for a complete run, else "length" (the run hit
// its limits and its answer is its best so far).
func finishReason(v RunView) string {
	if v.Complete {
		return "stop"
	}
	return "length"
}

// usageOf is the run's token usage.
func usageOf(v RunView) *chatUsage {
	u := &chatUsage{}
	if v.Usage != nil {
		u.PromptTokens, u.CompletionTokens = v.Usage.PromptTokens, v.Usage.CompletionTokens
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// startChatRun starts a run of the pipeline at path on a new thread, as
// startRun does with the server's model spec: question picks a suite task
// (for a simulated model), prompt is the task's question, history the
// conversation's earlier turns (the thread's, as a follow-up turn's).
func (s *Server) startChatRun(ctx context.Context, path, question, prompt string, history state.History) (*run, error) {
	meta := threadMeta{Question: prompt, History: history}
	if len(history) > 0 {
		meta.Turn = len(history) + 1
	}
	var err error
	if _, meta.LLM, err = s.modelSpec(""); err != nil {
		return nil, err
	}
	if meta.Config, err = filepath.Abs(path); err != nil {
		return nil, err
	}
	rr := RunRequest{Config: path, Question: question}
	task, err := s.runTask(ctx, &rr, &meta)
	if err != nil {
		return nil, err
	}
	task.Question, task.History = prompt, history
	name := "chat-" + time.Now().UTC().Format("20060102-150405") + "-" + newID(4)
	id, err := s.reserve(name)
	if err != nil {
		return nil, err
	}
	if err := s.pipes.check(ctx, meta); err != nil {
		s.unreserve(name, id)
		return nil, loadError(err)
	}
	metaJSON, _ := json.Marshal(meta)
	taskJSON, _ := json.Marshal(task)
	if err := s.store.Create(ctx, journal.Thread{Name: name, Pipeline: path, Task: taskJSON, Meta: metaJSON, Status: journal.StatusInterrupted}); err != nil {
		s.unreserve(name, id)
		return nil, err
	}
	acc, err := s.launch(launch{id: id, thread: name, pipeline: path, meta: meta, kind: KindStart, question: task.Question,
		run: func(ctx context.Context, p *planner.Pipeline, opts ...planner.RunOption) (*planner.Result, error) {
			return p.Run(ctx, "", append(opts, planner.WithTask(task), planner.WithThread(s.store, name))...)
		}})
	if err != nil {
		return nil, err
	}
	return s.runOf(acc.RunID)
}

// waitRun waits for rn to finish and returns its view; when ctx ends
// first (the client went away) it cancels the run and returns ctx's error.
func waitRun(ctx context.Context, rn *run) (RunView, error) {
	for {
		rn.mu.Lock()
		finished, notify := rn.finished, rn.notify
		rn.mu.Unlock()
		if finished {
			return rn.view(), nil
		}
		select {
		case <-notify:
		case <-ctx.Done():
			rn.cancel()
			return RunView{}, ctx.Err()
		}
	}
}

// streamChat answers a run as Server-Sent Events of chat.completion.chunk
// objects: the role first, then the answer once the run ends (the
// pipeline's intermediate model output is not its answer, so it is not
// streamed), the finish reason with the run's usage, a separate usage
// chunk with no choices when stream_options.include_usage asks for one (as
// OpenAI sends it), and [DONE]. A run
// that fails ends the stream with an error object in OpenAI's shape.
func (s *Server) streamChat(w http.ResponseWriter, r *http.Request, rn *run, id, model string, created int64, includeUsage bool) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		if _, err := fmt.Fprintf(w, "data: %s\n\n", s.scrub.String(string(b))); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	chunk := func(delta *chatOutMessage, finish *string) chatCompletion {
		return chatCompletion{ID: id, Object: "chat.completion.chunk", Created: created, Model: model,
			Choices: []chatChoice{{Delta: delta, FinishReason: finish}}}
	}
	if !send(chunk(&chatOutMessage{Role: "assistant"}, nil)) {
		rn.cancel()
		return
	}
	v, err := waitRun(r.Context(), rn)
	if err != nil {
		return
	}
	if v.Status == string(journal.StatusFailed) || v.Status == string(journal.StatusInterrupted) || v.Status == string(journal.StatusWaiting) {
		ferr := modelError(runFailure(v))
		_, name := errorStatus(ferr)
		send(OpenAIError{Error: OpenAIErrorDetail{Message: ferr.Error(), Type: "server_error", Code: name}})
		return
	}
	finish := finishReason(v)
	last := chunk(&chatOutMessage{}, &finish)
	last.Usage = usageOf(v) // every stream ends with its usage, asked for or not
	if !send(chunk(&chatOutMessage{Content: v.Answer}, nil)) || !send(last) {
		return
	}
	if includeUsage {
		u := chatCompletion{ID: id, Object: "chat.completion.chunk", Created: created, Model: model, Choices: []chatChoice{}, Usage: usageOf(v)}
		if !send(u) {
			return
		}
	}
	_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	_ = rc.Flush()
}
