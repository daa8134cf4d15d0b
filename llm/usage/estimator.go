package usage

import (
	"errors"
	"fmt"
	"hash/maphash"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/tmc/langchaingo/llms"
)

// Encoding names accepted by WithEncoding.
const (
	// EncodingO200k is the tokenizer of GPT-4o and later OpenAI models. It is
	// the default.
	EncodingO200k = "o200k_base"
	// EncodingCL100k is the tokenizer of GPT-3.5 and GPT-4.
	EncodingCL100k = "cl100k_base"
)

// Per-message costs used by EstimateMessages. They follow OpenAI's chat
// format, where each message is framed as <|start|>role<|message|>content<|end|>.
const (
	// MessageOverhead is added for every message: three framing tokens plus
	// one token for the role name.
	MessageOverhead = 4
	// ReplyOverhead is added once per request for the tokens that prime the
	// assistant's reply.
	ReplyOverhead = 3
	// ImageTokens is the flat cost charged for every image or binary part.
	// It is OpenAI's low-detail image cost; high-detail images and other
	// providers cost more, so treat it as a lower bound.
	ImageTokens = 85
)

// ErrUnknownEncoding is returned by NewEstimator for an encoding name other
// than EncodingO200k or EncodingCL100k.
var ErrUnknownEncoding = errors.New("usage: unknown tokenizer encoding")

// Pre-tokenisation patterns of the supported encodings, as published with
// OpenAI's tiktoken. Each alternative splits off one kind of piece; the BPE
// merge ranks are then applied within each piece.
var encodingPatterns = map[string][]string{
	EncodingCL100k: {
		`(?i:'s|'t|'re|'ve|'m|'ll|'d)`, // English contractions
		`[^\r\n\p{L}\p{N}]?\p{L}+`,     // a word with one optional leading symbol
		`\p{N}{1,3}`,                   // up to three digits
		` ?[^\s\p{L}\p{N}]+[\r\n]*`,    // punctuation runs
		`\s*[\r\n]+`,                   // line breaks
		`\s+(?!\S)`,                    // trailing whitespace
		`\s+`,                          // other whitespace
	},
	EncodingO200k: {
		// A word starting lower case or caseless, with an optional contraction.
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		// A word of upper-case letters followed by optional lower-case ones.
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		`\p{N}{1,3}`,                 // up to three digits
		` ?[^\s\p{L}\p{N}]+[\r\n/]*`, // punctuation runs
		`\s*[\r\n]+`,                 // line breaks
		`\s+(?!\S)`,                  // trailing whitespace
		`\s+`,                        // other whitespace
	},
}

// Estimator counts tokens with a BPE tokenizer whose merge ranks are embedded
// in the binary, so it works offline. Building one parses the whole rank
// file (about 150 ms for o200k_base), so create one per process and share it;
// its methods are safe for concurrent use.
//
// Counts of texts of at least cacheMinLen bytes are memoised in an LRU keyed
// by a 64-bit hash of the text: agent prompts resend the same system text,
// examples and earlier turns on every call, and tokenising them again
// dominated the CPU time of offline comparisons.
type Estimator struct {
	enc      *tiktoken.Tiktoken
	encoding string
	seed     maphash.Seed
	cache    *lru.Cache[uint64, int]
}

// cacheMinLen is the shortest text whose count is memoised; shorter texts
// tokenise faster than a cache round trip is worth.
const cacheMinLen = 64

// DefaultCacheSize is how many counts an Estimator memoises by default.
const DefaultCacheSize = 1 << 16

// EstimatorOption configures NewEstimator.
type EstimatorOption func(*estimatorConfig)

type estimatorConfig struct {
	encoding  string
	cacheSize int
}

// WithCacheSize sets how many token counts are memoised. Optional. Defaults
// to DefaultCacheSize (65,536 entries, about 3 MB); 0 or less disables the
// cache.
func WithCacheSize(n int) EstimatorOption {
	return func(c *estimatorConfig) { c.cacheSize = n }
}

// WithEncoding selects the tokenizer: EncodingO200k (default) or
// EncodingCL100k. Counts are exact for OpenAI models using that encoding and
// an approximation (typically within 10-20 %) for other providers.
func WithEncoding(name string) EstimatorOption {
	return func(c *estimatorConfig) { c.encoding = name }
}

// NewEstimator loads the tokenizer. It fails with ErrUnknownEncoding for an
// unsupported encoding name.
func NewEstimator(opts ...EstimatorOption) (*Estimator, error) {
	cfg := estimatorConfig{encoding: EncodingO200k, cacheSize: DefaultCacheSize}
	for _, o := range opts {
		o(&cfg)
	}
	pats, ok := encodingPatterns[cfg.encoding]
	if !ok {
		return nil, fmt.Errorf("%w %q: use %q or %q", ErrUnknownEncoding, cfg.encoding, EncodingO200k, EncodingCL100k)
	}
	// The rank files are embedded by the loader and looked up by base name.
	ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(cfg.encoding + ".tiktoken")
	if err != nil {
		return nil, fmt.Errorf("usage: load %s ranks: %w", cfg.encoding, err)
	}
	pattern := strings.Join(pats, "|")
	// Special tokens are left out: Count encodes them as ordinary text.
	bpe, err := tiktoken.NewCoreBPE(ranks, map[string]int{}, pattern)
	if err != nil {
		return nil, fmt.Errorf("usage: build %s tokenizer: %w", cfg.encoding, err)
	}
	enc := tiktoken.NewTiktoken(bpe, &tiktoken.Encoding{
		Name:           cfg.encoding,
		PatStr:         pattern,
		MergeableRanks: ranks,
		SpecialTokens:  map[string]int{},
	}, map[string]any{})
	e := &Estimator{enc: enc, encoding: cfg.encoding, seed: maphash.MakeSeed()}
	if cfg.cacheSize > 0 {
		if e.cache, err = lru.New[uint64, int](cfg.cacheSize); err != nil {
			return nil, fmt.Errorf("usage: token cache: %w", err)
		}
	}
	return e, nil
}

// Encoding returns the name of the tokenizer in use.
func (e *Estimator) Encoding() string { return e.encoding }

// Count returns the number of tokens in text. Special-token markers such as
// "<|endoftext|>" are counted as ordinary text.
func (e *Estimator) Count(text string) int {
	if text == "" {
		return 0
	}
	if e.cache == nil || len(text) < cacheMinLen {
		return len(e.enc.EncodeOrdinary(text))
	}
	key := maphash.String(e.seed, text)
	if n, ok := e.cache.Get(key); ok {
		return n
	}
	n := len(e.enc.EncodeOrdinary(text))
	e.cache.Add(key, n)
	return n
}

// EstimateMessages estimates the prompt tokens of a chat request:
// MessageOverhead per message, ReplyOverhead once, plus for each part:
// text tokens for TextContent; ImageTokens for ImageURLContent and
// BinaryContent; the ID, function name and arguments for a ToolCall; the
// call ID and content for a ToolCallResponse. Tool definitions passed as call
// options are not counted. An empty slice yields 0.
func (e *Estimator) EstimateMessages(msgs []llms.MessageContent) int {
	if len(msgs) == 0 {
		return 0
	}
	total := ReplyOverhead
	for _, m := range msgs {
		total += MessageOverhead
		for _, p := range m.Parts {
			total += e.countPart(p)
		}
	}
	return total
}

func (e *Estimator) countPart(p llms.ContentPart) int {
	switch v := p.(type) {
	case llms.TextContent:
		return e.Count(v.Text)
	case *llms.TextContent:
		return e.Count(v.Text)
	case llms.ImageURLContent, *llms.ImageURLContent, llms.BinaryContent, *llms.BinaryContent:
		return ImageTokens
	case llms.ToolCall:
		return e.countToolCall(v)
	case *llms.ToolCall:
		return e.countToolCall(*v)
	case llms.ToolCallResponse:
		return e.Count(v.ToolCallID) + e.Count(v.Content)
	case *llms.ToolCallResponse:
		return e.Count(v.ToolCallID) + e.Count(v.Content)
	default:
		return 0
	}
}

func (e *Estimator) countToolCall(tc llms.ToolCall) int {
	n := e.Count(tc.ID)
	if tc.FunctionCall != nil {
		n += e.Count(tc.FunctionCall.Name) + e.Count(tc.FunctionCall.Arguments)
	}
	return n
}

// EstimateResponse estimates the completion tokens of resp: the content,
// reasoning content and tool calls (name and arguments) of every choice.
func (e *Estimator) EstimateResponse(resp *llms.ContentResponse) int {
	if resp == nil {
		return 0
	}
	total := 0
	for _, c := range resp.Choices {
		if c == nil {
			continue
		}
		total += e.Count(c.Content) + e.Count(c.ReasoningContent)
		for _, tc := range c.ToolCalls {
			if tc.FunctionCall != nil {
				total += e.Count(tc.FunctionCall.Name) + e.Count(tc.FunctionCall.Arguments)
			}
		}
		if len(c.ToolCalls) == 0 && c.FuncCall != nil {
			total += e.Count(c.FuncCall.Name) + e.Count(c.FuncCall.Arguments)
		}
	}
	return total
}

// Estimate returns an estimated Usage for a request and its response.
func (e *Estimator) Estimate(msgs []llms.MessageContent, resp *llms.ContentResponse) Usage {
	return Usage{
		PromptTokens:     e.EstimateMessages(msgs),
		CompletionTokens: e.EstimateResponse(resp),
		Estimated:        true,
	}
}

// Resolve returns the provider-reported usage of resp when present and an
// estimate from msgs and resp otherwise.
func (e *Estimator) Resolve(msgs []llms.MessageContent, resp *llms.ContentResponse) Usage {
	if u, ok := FromResponse(resp); ok {
		return u
	}
	return e.Estimate(msgs, resp)
}
