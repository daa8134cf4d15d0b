package adapter

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/planner-engine/planner/llm/middleware"
)

// The providers' stream events are split, when one is too long for
// langchaingo's reader (middleware.LongLineTransport), into events that
// its readers assemble into the same reply:
//
//   - anthropic's events are repeated, once per piece of their longest
//     string, each long string replaced by its next piece (or "" once it
//     has none left): a content_block_delta keeps its type and index and
//     so appends each piece to its block;
//   - openai's chunks keep their first event whole, its long strings cut
//     to their first piece; each further piece goes in a chunk with only
//     the choice's index, its finish_reason and the delta's field (a tool
//     call's arguments with its index but no id, type or name, which
//     langchaingo reads as a continuation of the call). A delta with
//     several tool calls is first made one event per call, so that each
//     call's pieces follow it.
//
// ollama's NDJSON reader takes lines of 500 KB, and googleai and mistral
// read with their SDKs, which take lines of any length: they get no
// splitter.
func splitterFor(provider string) middleware.SplitFunc {
	switch provider {
	case OpenAI:
		return splitOpenAI
	case Anthropic:
		return splitRepeat
	}
	return nil
}

// decodeEvent decodes a JSON object, keeping numbers as written.
func decodeEvent(event []byte) (map[string]any, bool) {
	d := json.NewDecoder(bytes.NewReader(event))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil || d.More() {
		return nil, false
	}
	return m, true
}

// encodeEvent encodes v on one line, without escaping HTML characters.
func encodeEvent(v any) ([]byte, bool) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, false
	}
	return bytes.TrimRight(b.Bytes(), "\n"), true
}

// pieces cuts s into pieces of at most size bytes, at character
// boundaries (a piece holds at least one character).
func pieces(s string, size int) []string {
	var out []string
	for len(s) > size {
		n := size
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		if n == 0 {
			_, n = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// longStrings returns how many strings of v are longer than size.
func longStrings(v any, size int) int {
	switch t := v.(type) {
	case string:
		if len(t) > size {
			return 1
		}
	case []any:
		n := 0
		for _, e := range t {
			n += longStrings(e, size)
		}
		return n
	case map[string]any:
		n := 0
		for _, e := range t {
			n += longStrings(e, size)
		}
		return n
	}
	return 0
}

// pieceSize shares piece among the n long strings of one event, so that
// the event stays short however many it holds.
func pieceSize(piece, n int) int { return max(piece/max(n, 1), 256) }

// withPiece returns a copy of v in which each string longer than size is
// replaced by its piece i ("" when it has fewer), and whether any string
// has a piece after i.
func withPiece(v any, size, i int) (any, bool) {
	switch t := v.(type) {
	case string:
		if len(t) <= size {
			return t, false
		}
		ps := pieces(t, size)
		if i >= len(ps) {
			return "", false
		}
		return ps[i], i+1 < len(ps)
	case []any:
		out, more := make([]any, len(t)), false
		for j, e := range t {
			var m bool
			out[j], m = withPiece(e, size, i)
			more = more || m
		}
		return out, more
	case map[string]any:
		out, more := make(map[string]any, len(t)), false
		for k, e := range t {
			var m bool
			out[k], m = withPiece(e, size, i)
			more = more || m
		}
		return out, more
	}
	return v, false
}

// splitRepeat splits an event by repeating it once per piece of its long
// strings (anthropic).
func splitRepeat(event []byte, piece int) [][]byte {
	m, ok := decodeEvent(event)
	if !ok {
		return nil
	}
	n := longStrings(m, piece)
	if n == 0 {
		return nil
	}
	size := pieceSize(piece, n)
	var out [][]byte
	for i, more := 0, true; more; i++ {
		var v any
		v, more = withPiece(m, size, i)
		b, ok := encodeEvent(v)
		if !ok {
			return nil
		}
		out = append(out, b)
	}
	return out
}

// splitOpenAI splits a chat completion chunk (see splitterFor).
func splitOpenAI(event []byte, piece int) [][]byte {
	m, ok := decodeEvent(event)
	if !ok {
		return nil
	}
	choices, _ := m["choices"].([]any)
	if longStrings(choices, piece) == 0 {
		return nil
	}
	var out [][]byte
	for _, ev := range oneToolCallEach(m) {
		size := pieceSize(piece, longStrings(ev, piece))
		head, _ := withPiece(ev, size, 0)
		b, ok := encodeEvent(head)
		if !ok {
			return nil
		}
		out = append(out, b)
		evChoices, _ := ev["choices"].([]any)
		for i := 1; ; i++ {
			var next []any
			for _, c := range evChoices {
				if c, ok := continuation(c, size, i); ok {
					next = append(next, c)
				}
			}
			if next == nil {
				break
			}
			b, ok := encodeEvent(map[string]any{"choices": next})
			if !ok {
				return nil
			}
			out = append(out, b)
		}
	}
	return out
}

// oneToolCallEach returns chunk, or, when its one choice's delta holds
// several tool calls, one chunk per tool call: the first with the rest of
// the delta, the last with the choice's finish_reason and the usage.
func oneToolCallEach(chunk map[string]any) []map[string]any {
	choices, _ := chunk["choices"].([]any)
	if len(choices) != 1 {
		return []map[string]any{chunk}
	}
	choice, _ := choices[0].(map[string]any)
	delta, _ := choice["delta"].(map[string]any)
	calls, _ := delta["tool_calls"].([]any)
	if len(calls) < 2 {
		return []map[string]any{chunk}
	}
	out := make([]map[string]any, len(calls))
	for j, call := range calls {
		d := map[string]any{"tool_calls": []any{call}}
		if j == 0 {
			for k, v := range delta {
				if k != "tool_calls" {
					d[k] = v
				}
			}
		}
		c := map[string]any{"delta": d}
		for k, v := range choice {
			if k != "delta" && (k != "finish_reason" || j == len(calls)-1) {
				c[k] = v
			}
		}
		ev := map[string]any{"choices": []any{c}}
		for k, v := range chunk {
			if k != "choices" && (k != "usage" || j == len(calls)-1) {
				ev[k] = v
			}
		}
		out[j] = ev
	}
	return out
}

// continuation returns the choice of an openai continuation chunk that
// carries piece i of the long strings of choice c's delta, and whether
// there is any.
func continuation(c any, size, i int) (map[string]any, bool) {
	choice, _ := c.(map[string]any)
	delta, _ := choice["delta"].(map[string]any)
	d := map[string]any{}
	for _, k := range []string{"content", "reasoning_content", "refusal"} {
		if s, ok := delta[k].(string); ok && len(s) > size {
			if p := pieces(s, size); i < len(p) {
				d[k] = p[i]
			}
		}
	}
	if fc, ok := delta["function_call"].(map[string]any); ok {
		if s, ok := fc["arguments"].(string); ok && len(s) > size {
			if p := pieces(s, size); i < len(p) {
				d["function_call"] = map[string]any{"arguments": p[i]}
			}
		}
	}
	var calls []any
	tcs, _ := delta["tool_calls"].([]any)
	for _, tc := range tcs {
		call, _ := tc.(map[string]any)
		fn, _ := call["function"].(map[string]any)
		if s, ok := fn["arguments"].(string); ok && len(s) > size {
			if p := pieces(s, size); i < len(p) {
				cont := map[string]any{"function": map[string]any{"arguments": p[i]}}
				if idx, ok := call["index"]; ok {
					cont["index"] = idx
				}
				calls = append(calls, cont)
			}
		}
	}
	if calls != nil {
		d["tool_calls"] = calls
	}
	if len(d) == 0 {
		return nil, false
	}
	out := map[string]any{"delta": d}
	if idx, ok := choice["index"]; ok {
		out["index"] = idx
	}
	if fr, ok := choice["finish_reason"]; ok {
		out["finish_reason"] = fr
	}
	return out, true
}
