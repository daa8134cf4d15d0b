package usage

import (
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"unicode/utf8"

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

// ErrInvalidOption is returned by NewEstimator for an option value out of
// its documented range.
var ErrInvalidOption = errors.New("usage: invalid estimator option")

// Bounds of the piece length that the byte-pair merge sees; see
// WithMaxPieceBytes.
const (
	// DefaultMaxPieceBytes is the default longest piece, in bytes, that is
	// byte-pair encoded as a whole. Only runs without a break reach it (a
	// repeated character, a long white-space run, 8 KiB of letters with no
	// space, digit or punctuation); prose, code, JSON and base64 split into
	// far shorter pieces.
	DefaultMaxPieceBytes = 8 << 10
	// MinMaxPieceBytes is the smallest value WithMaxPieceBytes accepts: the
	// longest UTF-8 encoding of one rune, so that every chunk holds at least
	// one rune.
	MinMaxPieceBytes = utf8.UTFMax
	// MaxMaxPieceBytes is the largest value WithMaxPieceBytes accepts
	// (1 GiB); the merge addresses a piece with 32-bit offsets.
	MaxMaxPieceBytes = 1 << 30
)

// Pre-tokenisation patterns of the supported encodings, as published with
// OpenAI's tiktoken. Each alternative splits off one kind of piece; the BPE
// merge ranks are then applied within each piece. Count splits with
// pieceEnds, which implements these patterns without a regexp engine; the
// patterns themselves build the tiktoken-go reference encoder.
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

// pieceEnds maps each encoding to the function that returns the end of the
// piece of its pattern starting at a given byte offset.
var pieceEnds = map[string]func(s string, i int) int{
	EncodingCL100k: pieceEndCL100k,
	EncodingO200k:  pieceEndO200k,
}

// Estimator counts tokens with a BPE tokenizer whose merge ranks are embedded
// in the binary, so it works offline. Building one parses the whole rank
// file (about 150 ms for o200k_base), so create one per process and share it;
// its methods are safe for concurrent use.
//
// # Cost and exactness
//
// Count splits the text into pieces with the encoding's pre-tokenisation
// pattern in one forward pass (finding the same pieces as tiktoken-go's
// regexp) and byte-pair encodes each piece in O(n log n) for n bytes, so its
// time is about linear in the length of the text whatever the text's shape.
// On one core of the development machine a megabyte took about 40 ms of CPU
// as prose, 15 ms as one repeated character, 0.3 s as random base64 and
// 0.6 s as random letters without a break, the slowest shape measured (see
// BenchmarkCountProse and the benchmarks next to it).
//
// A piece longer than the maximum piece length (DefaultMaxPieceBytes, 8 KiB,
// unless set with WithMaxPieceBytes) is cut, at rune boundaries, into chunks
// of at most that many bytes, each encoded on its own. This bounds the
// memory of a count (about 40 bytes per byte of the maximum piece length)
// and is the only approximation. Such pieces come only from runs without a
// break: a repeated character, a long white-space run, or 8 KiB of letters
// with no space, digit or punctuation between them (o200k_base also breaks
// words where lower case turns to upper). For every other text, including
// prose, code, JSON and base64, the count is exactly tiktoken's. At a cut,
// merges across it are lost and the chunks may merge differently, so a cut
// can add or remove a token or two (at most one in our measurements); over
// 1 MB runs of one letter, of "ab", of spaces and of "。" the tests hold the
// count within 0.1 % of the exact one (measured: 0 to 0.03 %). Counts are
// estimates in any case: Estimate marks its Usage as Estimated.
//
// # Cache
//
// Counts of texts of at least cacheMinLen bytes are memoised in an LRU keyed
// by a 64-bit hash of the text: agent prompts resend the same system text,
// examples and earlier turns on every call, and tokenising them again
// dominated the CPU time of offline comparisons. A text is memoised in
// blocks of about a kilobyte cut after line feeds where no token can span
// the cut (see blockEnd), so a prompt that grows by appending, such as a
// completion-style ReAct prompt, re-tokenises only its new text; the count
// is the same as without blocks. The cache holds only hashes and counts,
// never the texts. It is split into independently locked shards, and the
// merge buffers are pooled per estimator, so concurrent counts share no
// process-wide lock.
type Estimator struct {
	encoding string
	ranks    map[string]int
	// pieceEnd returns the end of the pre-tokenisation piece starting at a
	// byte offset; see pieceEnds.
	pieceEnd func(s string, i int) int
	// maxPiece is the longest piece, in bytes, that is merged as a whole.
	maxPiece int
	seed     maphash.Seed
	// cache is nil when the cache is disabled.
	cache *countCache
	// scratch pools *bpeScratch buffers between count calls; a pointer, so
	// that copies of an Estimator share it.
	scratch *sync.Pool
	// onMerge, when not nil, is called with every piece or chunk handed to
	// the byte-pair merge. Tests set it to observe the work Count does.
	onMerge func(piece string)
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
	maxPiece  int
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

// WithMaxPieceBytes sets the longest pre-tokenisation piece, in bytes, that
// is byte-pair encoded as a whole; longer pieces are cut into chunks of at
// most n bytes at rune boundaries and counted chunk by chunk, which can be
// off by a token or two per cut (see Estimator). Optional. Defaults to
// DefaultMaxPieceBytes (8 KiB). NewEstimator fails with ErrInvalidOption
// for n outside [MinMaxPieceBytes, MaxMaxPieceBytes]. Counting stays about
// linear for any n; a larger n makes fewer cuts and uses more memory per
// Count call (about 40 bytes per byte of n).
func WithMaxPieceBytes(n int) EstimatorOption {
	return func(c *estimatorConfig) { c.maxPiece = n }
}

// NewEstimator loads the tokenizer. It fails with ErrUnknownEncoding for an
// unsupported encoding name and with ErrInvalidOption for an option value
// out of range.
func NewEstimator(opts ...EstimatorOption) (*Estimator, error) {
	cfg := estimatorConfig{encoding: EncodingO200k, cacheSize: DefaultCacheSize, maxPiece: DefaultMaxPieceBytes}
	for _, o := range opts {
		o(&cfg)
	}
	if _, ok := encodingPatterns[cfg.encoding]; !ok {
		return nil, fmt.Errorf("%w %q: use %q or %q", ErrUnknownEncoding, cfg.encoding, EncodingO200k, EncodingCL100k)
	}
	if cfg.maxPiece < MinMaxPieceBytes || cfg.maxPiece > MaxMaxPieceBytes {
		return nil, fmt.Errorf("%w: max piece bytes %d is outside [%d, %d]", ErrInvalidOption, cfg.maxPiece, MinMaxPieceBytes, MaxMaxPieceBytes)
	}
	// The rank files are embedded by the loader and looked up by base name.
	ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(cfg.encoding + ".tiktoken")
	if err != nil {
		return nil, fmt.Errorf("usage: load %s ranks: %w", cfg.encoding, err)
	}
	e := &Estimator{
		encoding: cfg.encoding,
		ranks:    ranks,
		pieceEnd: pieceEnds[cfg.encoding],
		maxPiece: cfg.maxPiece,
		seed:     maphash.MakeSeed(),
		scratch:  &sync.Pool{New: func() any { return new(bpeScratch) }},
	}
	if cfg.cacheSize > 0 {
		if e.cache, err = newCountCache(cfg.cacheSize); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Encoding returns the name of the tokenizer in use.
func (e *Estimator) Encoding() string { return e.encoding }

// Count returns the number of tokens in text. Special-token markers such as
// "<|endoftext|>" are counted as ordinary text, and a byte that is not part
// of valid UTF-8 as U+FFFD, as tiktoken-go does. The count is exact unless
// text holds a run longer than the maximum piece length, which is counted
// within a token or two per cut (see Estimator). Count takes no context:
// its time is about linear in len(text), under a second of CPU per megabyte
// for every shape of text measured.
func (e *Estimator) Count(text string) int {
	if text == "" {
		return 0
	}
	if e.cache == nil || len(text) < cacheMinLen {
		return e.count(text)
	}
	total := 0
	for text != "" {
		end := blockEnd(text, blockBytes)
		total += e.cachedCount(text[:end])
		text = text[end:]
	}
	return total
}

// cachedCount returns the count of one block of text through the cache.
func (e *Estimator) cachedCount(block string) int {
	if len(block) < cacheMinLen {
		return e.count(block)
	}
	key := maphash.String(e.seed, block)
	if n, ok := e.cache.get(key); ok {
		return n
	}
	n := e.count(block)
	e.cache.add(key, n)
	return n
}

// maxPooledScratch is the largest piece length, in bytes, whose merge buffers
// are kept for reuse (at the default maximum piece length, all are).
const maxPooledScratch = DefaultMaxPieceBytes

// count counts the tokens of text without the cache.
func (e *Estimator) count(text string) int {
	text = validUTF8(text)
	sc := e.scratch.Get().(*bpeScratch)
	total := 0
	for i := 0; i < len(text); {
		end := e.pieceEnd(text, i)
		total += e.countPiece(text[i:end], sc)
		i = end
	}
	if cap(sc.next) <= maxPooledScratch {
		e.scratch.Put(sc) // buffers for a huge piece are left to the collector
	}
	return total
}

// countPiece returns the tokens of one pre-tokenisation piece: one when the
// piece is a token, and otherwise those of its byte-pair merge, cutting a
// piece longer than e.maxPiece into chunks at rune boundaries.
func (e *Estimator) countPiece(piece string, sc *bpeScratch) int {
	if _, ok := e.ranks[piece]; ok {
		return 1
	}
	if len(piece) <= e.maxPiece {
		return e.merge(piece, sc)
	}
	// A long piece is nearly always one character or a short pattern
	// repeated, whose chunks repeat too: remember the counts of the first
	// few distinct chunks.
	var seen map[string]int
	total := 0
	for len(piece) > e.maxPiece {
		cut := e.maxPiece
		for !utf8.RuneStart(piece[cut]) {
			cut--
		}
		chunk := piece[:cut]
		n, ok := seen[chunk]
		if !ok {
			n = e.countChunk(chunk, sc)
			if seen == nil {
				seen = make(map[string]int, maxSeenChunks)
			}
			if len(seen) < maxSeenChunks {
				seen[chunk] = n
			}
		}
		total += n
		piece = piece[cut:]
	}
	return total + e.countChunk(piece, sc)
}

// maxSeenChunks is how many distinct chunks of one cut piece countPiece
// remembers. A run of a pattern of p bytes has p/gcd(p, chunk length)
// distinct chunks, so this covers every pattern of up to 8 bytes.
const maxSeenChunks = 8

// countChunk returns the tokens of one chunk of a cut piece.
func (e *Estimator) countChunk(chunk string, sc *bpeScratch) int {
	if _, ok := e.ranks[chunk]; ok {
		return 1
	}
	return e.merge(chunk, sc)
}

// merge byte-pair encodes a piece known not to be a single token.
func (e *Estimator) merge(piece string, sc *bpeScratch) int {
	if e.onMerge != nil {
		e.onMerge(piece)
	}
	return bpeCount(piece, e.ranks, sc)
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
