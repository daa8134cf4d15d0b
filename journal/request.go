package journal

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"

	"github.com/planner-engine/planner/hooks"
	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/llm/cassette"
	"github.com/tmc/langchaingo/llms"
)

// requestBody is what a model call's digest covers: the caller's role
// and the request, as JSON. A model entry journaled with KeepRequests
// holds it as its Request, as every model entry did before requests were
// journaled as digests.
type requestBody struct {
	Role    string           `json:"role,omitempty"`
	Request cassette.Request `json:"request"`
}

// modelRequest is what a model entry's Request holds, in any of the
// forms the journal has written: the whole request (Request set: a
// journal kept with KeepRequests, or written before requests were kept
// as digests), or its digests (Compacted, with Shape unless the entry
// was compacted from a whole one by Compact). Replay matches every form
// by the entry's Digest.
type modelRequest struct {
	// Role is the caller's role in its node (llm.CallMeta.Role).
	Role string `json:"role,omitempty"`
	// Request is the whole request, when kept.
	Request *cassette.Request `json:"request,omitempty"`
	// Compacted is set when the request's messages and options were not
	// kept: the entry is replayed by its digest.
	Compacted bool `json:"compacted,omitempty"`
	// Shape is what a divergence report compares when the request was
	// not kept.
	Shape *requestShape `json:"shape,omitempty"`
}

// shapeEnds is how many messages at each end of a request the shape of a
// request digests one by one.
const shapeEnds = 6

// requestShape describes a request the journal keeps as digests, enough to
// say what differs when a resumed run asks for another one: its size, the
// digest of its options and of its first and last messages, each
// "role:digest" (12 hex digits of the SHA-256 of the message's JSON). A
// request of up to 2*shapeEnds messages has every message digested.
type requestShape struct {
	// Messages is how many messages the request has; Bytes the size of
	// its JSON.
	Messages int `json:"messages"`
	Bytes    int `json:"bytes"`
	// Options is the digest of the call options (model, tools,
	// temperature, stop words...).
	Options string `json:"options"`
	// Head digests the first messages, up to shapeEnds; Tail the last
	// ones after those, up to shapeEnds.
	Head []string `json:"head,omitempty"`
	Tail []string `json:"tail,omitempty"`
}

// liveRequest is a live model call's request in the forms the journal
// needs.
type liveRequest struct {
	role string
	in   []llms.MessageContent
	opt  []llms.CallOption
	// msgs holds the JSON of each message (as cassette.Message) and its
	// "role:digest"; opts the JSON of the options (cassette.Options);
	// body the JSON of the requestBody, assembled from them; sum its
	// digest.
	msgs []*encodedMessage
	opts []byte
	body []byte
	sum  string
	// req is the request's cassette form, made on demand (request).
	req *cassette.Request
}

// encodedMessage is a message's JSON and its "role:digest". It is not
// modified once made: sessions share it.
type encodedMessage struct {
	role  string
	json  []byte
	short string
}

// digest returns the message's "role:digest".
func (m *encodedMessage) digest() string { return m.short }

// request returns the request's cassette form.
func (lr *liveRequest) request() cassette.Request {
	if lr.req == nil {
		req := cassette.NewRequest(lr.in, lr.opt)
		lr.req = &req
	}
	return *lr.req
}

// encodeRequest encodes a live model call: its JSON, byte for byte the
// encoding/json encoding of its requestBody (which is what journals
// written before requests were kept as digests hold, and what their
// digests cover), assembled from the JSON of each message so that the
// shape digests messages without encoding them twice, and so that c, when
// not nil, encodes each message of a conversation once however many calls
// send it.
func encodeRequest(c *messageCache, role string, msgs []llms.MessageContent, opts []llms.CallOption) (*liveRequest, error) {
	lr := &liveRequest{role: role, in: msgs, opt: opts}
	var err error
	if lr.msgs, err = c.encode(msgs); err != nil {
		return nil, fmt.Errorf("journal: encoding a model request: %w", err)
	}
	options := cassette.NewRequest(nil, opts).Options
	if lr.opts, err = json.Marshal(&options); err != nil {
		return nil, fmt.Errorf("journal: encoding a model request: %w", err)
	}
	size := 64 + len(lr.opts) + len(role)
	for _, m := range lr.msgs {
		size += len(m.json) + 1
	}
	b := make([]byte, 0, size)
	b = append(b, '{')
	if role != "" {
		r, err := json.Marshal(role)
		if err != nil {
			return nil, fmt.Errorf("journal: encoding a model request: %w", err)
		}
		b = append(b, `"role":`...)
		b = append(b, r...)
		b = append(b, ',')
	}
	b = append(b, `"request":{"messages":[`...)
	for i, m := range lr.msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m.json...)
	}
	b = append(b, `],"options":`...)
	b = append(b, lr.opts...)
	b = append(b, `}}`...)
	lr.body = b
	lr.sum = digest([]byte(KindModel), lr.body)
	return lr, nil
}

// messageCache keeps the encoded messages of a session's model calls, so
// that a conversation that grows by appending — every agent loop's — has
// each message encoded once rather than once per call. A message is found
// by a hash of its content and checked against the one cached, part by
// part; messages with parts other than texts, tool calls and tool
// results are encoded every time. The nil cache encodes every message.
// It is safe for concurrent use.
type messageCache struct {
	mu    sync.Mutex
	seed  maphash.Seed
	m     map[uint64]cachedMessage
	bytes int
}

type cachedMessage struct {
	msg llms.MessageContent
	enc *encodedMessage
}

// maxCacheBytes bounds the JSON a messageCache holds; past it, it starts
// again empty.
const maxCacheBytes = 64 << 20

func newMessageCache() *messageCache {
	return &messageCache{seed: maphash.MakeSeed(), m: map[uint64]cachedMessage{}}
}

// encode returns the encoded msgs.
func (c *messageCache) encode(msgs []llms.MessageContent) ([]*encodedMessage, error) {
	out := make([]*encodedMessage, len(msgs))
	var keys []uint64
	if c != nil {
		keys = make([]uint64, len(msgs))
		c.mu.Lock()
		for i, m := range msgs {
			k, ok := c.key(m)
			if !ok {
				continue
			}
			keys[i] = k
			if cm, hit := c.m[k]; hit && sameMessage(cm.msg, m) {
				out[i] = cm.enc
			}
		}
		c.mu.Unlock()
	}
	// The messages encoded here that the cache keeps, added to it at the
	// end, under one lock.
	var added []int
	var err error
	for i := range msgs {
		if out[i] != nil {
			continue
		}
		rec := cassette.NewRequest(msgs[i:i+1], nil).Messages[0]
		var b []byte
		if b, err = json.Marshal(&rec); err != nil {
			break
		}
		out[i] = &encodedMessage{role: rec.Role, json: b, short: rec.Role + ":" + shortDigest(b)}
		if c != nil && keys[i] != 0 {
			added = append(added, i)
		}
	}
	if len(added) > 0 {
		fresh := make([]cachedMessage, len(added))
		for j, i := range added {
			fresh[j] = cachedMessage{msg: llms.MessageContent{Role: msgs[i].Role, Parts: slices.Clone(msgs[i].Parts)}, enc: out[i]}
		}
		c.mu.Lock()
		for j, i := range added {
			if c.bytes > maxCacheBytes {
				clear(c.m)
				c.bytes = 0
			}
			c.m[keys[i]] = fresh[j]
			c.bytes += len(out[i].json)
		}
		c.mu.Unlock()
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// key hashes m's content; ok is false for a message the cache does not
// keep (or whose hash is 0).
func (c *messageCache) key(m llms.MessageContent) (uint64, bool) {
	var h maphash.Hash
	h.SetSeed(c.seed)
	str := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		_, _ = h.Write(n[:])
		_, _ = h.WriteString(s)
	}
	str(string(m.Role))
	for _, p := range m.Parts {
		switch v := p.(type) {
		case llms.TextContent:
			_ = h.WriteByte('t')
			str(v.Text)
		case llms.ToolCallResponse:
			_ = h.WriteByte('r')
			str(v.ToolCallID)
			str(v.Name)
			str(v.Content)
		case llms.ToolCall:
			_ = h.WriteByte('c')
			str(v.ID)
			str(v.Type)
			if v.FunctionCall != nil {
				str(v.FunctionCall.Name)
				str(v.FunctionCall.Arguments)
			}
		default:
			return 0, false
		}
	}
	k := h.Sum64()
	return k, k != 0
}

// sameMessage reports whether a and b, messages the cache keeps, are
// equal.
func sameMessage(a, b llms.MessageContent) bool {
	if a.Role != b.Role || len(a.Parts) != len(b.Parts) {
		return false
	}
	for i, p := range a.Parts {
		switch v := p.(type) {
		case llms.TextContent:
			w, ok := b.Parts[i].(llms.TextContent)
			if !ok || v != w {
				return false
			}
		case llms.ToolCallResponse:
			w, ok := b.Parts[i].(llms.ToolCallResponse)
			if !ok || v != w {
				return false
			}
		case llms.ToolCall:
			w, ok := b.Parts[i].(llms.ToolCall)
			if !ok || v.ID != w.ID || v.Type != w.Type || (v.FunctionCall == nil) != (w.FunctionCall == nil) ||
				(v.FunctionCall != nil && *v.FunctionCall != *w.FunctionCall) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// shortDigest is the first 12 hex digits of the SHA-256 of b.
func shortDigest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:6])
}

// shape returns the request's shape.
func (lr *liveRequest) shape() *requestShape {
	n := len(lr.msgs)
	sh := &requestShape{Messages: n, Bytes: len(lr.body), Options: shortDigest(lr.opts)}
	head := min(n, shapeEnds)
	for i := range head {
		sh.Head = append(sh.Head, lr.msgs[i].digest())
	}
	for i := max(head, n-shapeEnds); i < n; i++ {
		sh.Tail = append(sh.Tail, lr.msgs[i].digest())
	}
	return sh
}

// record returns what a model entry's Request holds for lr: the body
// when requests are kept whole, else the role and the shape.
func (lr *liveRequest) record(keep bool) ([]byte, error) {
	if keep {
		return lr.body, nil
	}
	b, err := json.Marshal(modelRequest{Role: lr.role, Compacted: true, Shape: lr.shape()})
	if err != nil {
		return nil, fmt.Errorf("journal: encoding a model request: %w", err)
	}
	return b, nil
}

// known returns the message digests of a shape by message index.
func (sh *requestShape) known() map[int]string {
	out := make(map[int]string, len(sh.Head)+len(sh.Tail))
	for i, d := range sh.Head {
		out[i] = d
	}
	for i, d := range sh.Tail {
		out[sh.Messages-len(sh.Tail)+i] = d
	}
	return out
}

// roleOf returns the role of a "role:digest".
func roleOf(d string) string {
	role, _, _ := strings.Cut(d, ":")
	return role
}

// shapeDiff says what differs between a journaled model call kept as
// digests (rec, entry seq) and the live request lr.
func shapeDiff(seq int64, rec modelRequest, lr *liveRequest) string {
	sh := rec.Shape
	var b strings.Builder
	fmt.Fprintf(&b, "the journal keeps model requests as digests (journal.KeepRequests, or --keep-requests on planner run and resume, keeps them whole for a line-by-line diff), so this compares the journaled call (checkpoint %d) with the actual one by digest:\n", seq)
	if rec.Role != lr.role {
		fmt.Fprintf(&b, "  role: %q, journaled %q\n", lr.role, rec.Role)
	}
	optsDiffer := shortDigest(lr.opts) != sh.Options
	if optsDiffer {
		b.WriteString("  options (model, tools, temperature, stop words...): differ\n")
	} else {
		b.WriteString("  options: as journaled\n")
	}
	n := len(lr.msgs)
	if n != sh.Messages {
		fmt.Fprintf(&b, "  messages: %d, journaled %d\n", n, sh.Messages)
	}
	known := sh.known()
	first, unknownFrom := -1, -1
	for i := range max(n, sh.Messages) {
		d, ok := known[i]
		switch {
		case i >= n || i >= sh.Messages:
			first = i
		case !ok:
			if unknownFrom < 0 {
				unknownFrom = i
			}
			continue
		case d != lr.msgs[i].digest():
			first = i
		default:
			continue
		}
		break
	}
	switch {
	case first >= 0 && first < n:
		role := lr.msgs[first].role
		what := fmt.Sprintf("  message %d (%s) differs", first+1, role)
		if d, ok := known[first]; ok && roleOf(d) != role {
			what += fmt.Sprintf(" (journaled: a %s message)", roleOf(d))
		}
		if first >= sh.Messages {
			what = fmt.Sprintf("  message %d (%s) is new", first+1, role)
		}
		b.WriteString(what)
		if unknownFrom >= 0 {
			fmt.Fprintf(&b, "; messages %d to %d were journaled by count only and may differ too", unknownFrom+1, first)
		}
		b.WriteByte('\n')
	case first >= 0:
		fmt.Fprintf(&b, "  message %d (%s) and after are missing\n", first+1, roleOf(known[first]))
	case unknownFrom >= 0:
		fmt.Fprintf(&b, "  messages 1 to %d and %d to %d are as journaled; one of messages %d to %d (journaled by count only) differs\n",
			len(sh.Head), sh.Messages-len(sh.Tail)+1, sh.Messages, unknownFrom+1, sh.Messages-len(sh.Tail))
	default:
		b.WriteString("  messages: as journaled\n")
	}
	fmt.Fprintf(&b, "  size: %d bytes, journaled %d", len(lr.body), sh.Bytes)
	if optsDiffer {
		fmt.Fprintf(&b, "\nactual options: %s", oneLine(lr.opts))
	}
	if first >= 0 && first < n {
		fmt.Fprintf(&b, "\nactual message %d: %s", first+1, messageText(lr.request().Messages[first]))
	}
	return b.String()
}

// modelResponse is what a model entry's Response holds: the reply and
// the usage the metering measured for it (absent in journals written
// before usage was journaled, and for calls made outside the metering).
type modelResponse struct {
	cassette.Response
	Usage *usageRecord `json:"usage,omitempty"`
}

// usageRecord is a journaled call's hooks.Usage.
type usageRecord struct {
	Prompt     int     `json:"prompt"`
	Completion int     `json:"completion"`
	Cached     int     `json:"cached,omitempty"`
	Estimated  bool    `json:"estimated,omitempty"`
	Cost       float64 `json:"cost,omitempty"`
}

func newUsageRecord(u hooks.Usage) *usageRecord {
	return &usageRecord{Prompt: u.PromptTokens, Completion: u.CompletionTokens, Cached: u.CachedPromptTokens, Estimated: u.Estimated, Cost: u.CostUSD}
}

func (u *usageRecord) usage() hooks.Usage {
	return hooks.Usage{PromptTokens: u.Prompt, CompletionTokens: u.Completion, CachedPromptTokens: u.Cached, Estimated: u.Estimated, CostUSD: u.Cost}
}

// Usage returns the usage journaled with a model entry: the tokens and
// cost the metering measured when the call was made live, which a
// resumed run reports for the replayed call instead of measuring it
// again. ok is false for other entries, and for model entries journaled
// without it (by versions before usage was journaled, or by calls made
// outside the metering).
func (e Entry) Usage() (u hooks.Usage, ok bool) {
	if e.Kind != KindModel {
		return hooks.Usage{}, false
	}
	var rec struct {
		Usage *usageRecord `json:"usage"`
	}
	if json.Unmarshal(e.Response, &rec) != nil || rec.Usage == nil {
		return hooks.Usage{}, false
	}
	return rec.Usage.usage(), true
}

// A divergence's message shows a request's text on one line, cut to
// shownChars characters. Only about its first readBytes bytes are read:
// ample for shownChars characters once runs of white space are folded.
const (
	shownChars = 400
	readBytes  = 4000
)

// messageText is a message's content on one line, cut to shownChars
// characters: its texts, tool calls and tool results. Parts past the
// first readBytes bytes are left out.
func messageText(m cassette.Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if b.Len() > readBytes {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		switch p.Type {
		case "text":
			b.WriteString(p.Text)
		case "tool_call":
			fmt.Fprintf(&b, "[call %s %s]", p.Name, p.Arguments)
		case "tool_response":
			fmt.Fprintf(&b, "[result of %s: %s]", p.Name, p.Content)
		default:
			fmt.Fprintf(&b, "[%s]", p.Type)
		}
	}
	return textutil.Clip(textutil.OneLine(b.String()), shownChars)
}

// oneLine is b's first readBytes bytes on one line, cut to shownChars
// characters.
func oneLine(b []byte) string {
	if len(b) > readBytes {
		b = b[:readBytes]
	}
	return textutil.Clip(textutil.OneLine(string(b)), shownChars)
}
