// Package serpapi is the serpapi tool: Google search through SerpApi
// (https://serpapi.com), answered from the first of these parts of the
// results page that has something to say:
//
//  1. the answer box (Google's direct answer: answer, calculator or
//     converter result, weather, snippet, highlighted words, list,
//     table, dictionary definitions);
//  2. the sports results (the game in the spotlight, or the first games),
//     the step langchaingo's SerpApi tool takes between the answer box
//     and the knowledge graph;
//  3. the knowledge graph (title, type, description, the entity's facts
//     in SerpApi's order, the source);
//  4. the organic results (title, snippet and link of the first
//     Config.Results).
//
// A page with none of them, or SerpApi's "Google hasn't returned any
// results" error, is an observation saying so, not an error.
//
// The tool has its own client rather than wrapping langchaingo's
// tools/serpapi: that one ignores the HTTP status (a 401, a 429 and a 500
// are the same error), puts the request URL, API key included, in its
// transport errors, reads the whole body without a bound, reports "no
// results" as an error, reads only the first organic snippet (no title or
// link), fixes hl and gl, and decodes game_spotlight as a string where
// SerpApi sends an object.
//
// The API key is sent as SerpApi wants it, in the api_key query
// parameter; the tool strips it from every error and observation.
package serpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/planner-engine/planner/internal/textutil"
	"github.com/planner-engine/planner/tools"
)

// Defaults and limits of Config.
const (
	// DefaultName is the tool name the model calls.
	DefaultName = "serpapi"
	// DefaultBaseURL is SerpApi's search endpoint.
	DefaultBaseURL = "https://serpapi.com/search.json"
	// DefaultAPIKeyEnv is the environment variable read for the key.
	DefaultAPIKeyEnv = "SERPAPI_API_KEY"
	// DefaultResults is the number of organic results shown.
	DefaultResults = 3
	// MaxResults is the largest Config.Results accepted: one page of
	// Google results.
	MaxResults = 10
	// DefaultTimeout bounds one search, reading the answer included.
	DefaultTimeout = 15 * time.Second
	// DefaultMaxChars bounds the characters (runes) of an observation.
	DefaultMaxChars = 4000
	// MaxResponseBytes bounds the bytes of a SerpApi response read; a
	// larger one fails with ErrBadResponse. Results pages are usually
	// well under 1 MiB.
	MaxResponseBytes = 8 << 20
	// MaxQueryLength bounds a query in bytes, as Google does.
	MaxQueryLength = 2048
)

// Config configures the tool; its mapstructure tags are the keys of the
// tool's pipeline settings. Zero values take the defaults.
type Config struct {
	// APIKey is the SerpApi key. It is never read from a pipeline file;
	// when empty, New reads the environment variable APIKeyEnv.
	APIKey string `mapstructure:"-"`
	// APIKeyEnv names the environment variable holding the key. Default
	// DefaultAPIKeyEnv (SERPAPI_API_KEY).
	APIKeyEnv string `mapstructure:"api_key_env"`
	// Location is where the search should seem to come from, as SerpApi
	// names places ("Austin, Texas, United States"). Default empty:
	// SerpApi's choice.
	Location string `mapstructure:"location"`
	// Language is Google's hl parameter, a two-letter language code
	// ("en", "de"). Default empty: SerpApi's default, English.
	Language string `mapstructure:"hl"`
	// Country is Google's gl parameter, a two-letter country code ("us",
	// "de"). Default empty: SerpApi's default, the United States.
	Country string `mapstructure:"gl"`
	// Results is the number of organic results shown when neither an
	// answer box nor a knowledge graph answers, 1 to MaxResults. Default
	// DefaultResults (3).
	Results int `mapstructure:"num"`
	// Timeout bounds one search. Default DefaultTimeout (15s).
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxChars bounds the characters of an observation; a longer one is
	// cut and ends in "…". Default DefaultMaxChars (4000).
	MaxChars int `mapstructure:"max_chars"`
	// BaseURL is the search endpoint, an http or https URL. Default
	// DefaultBaseURL.
	BaseURL string `mapstructure:"base_url"`
	// Client sends the requests. Default a new http.Client; the timeout
	// comes from Timeout through the request's context.
	Client *http.Client `mapstructure:"-"`
	// LookupEnv reads the environment. Default os.LookupEnv.
	LookupEnv func(name string) (string, bool) `mapstructure:"-"`
}

// Tool is the serpapi tool. It implements tools.Tool, tools.Schemer and
// tools.MetaProvider and is safe for concurrent use.
type Tool struct {
	cfg      Config
	key      string
	endpoint *url.URL
}

// New returns a serpapi tool. It fails with a *ConfigError naming the
// setting at fault: "api_key_env" wrapping ErrMissingKey when there is no
// key, or num, timeout, max_chars or base_url wrapping ErrConfig when
// invalid.
func New(cfg Config) (*Tool, error) {
	cfg.APIKeyEnv = cmp.Or(strings.TrimSpace(cfg.APIKeyEnv), DefaultAPIKeyEnv)
	switch {
	case cfg.Results < 0 || cfg.Results > MaxResults:
		return nil, configErrorf("num", "num must be 1 to %d (one page of Google results), got %d", MaxResults, cfg.Results)
	case cfg.Timeout < 0:
		return nil, configErrorf("timeout", "timeout must not be negative (leave it out for %s)", DefaultTimeout)
	case cfg.MaxChars < 0:
		return nil, configErrorf("max_chars", "max_chars must not be negative (leave it out for %d)", DefaultMaxChars)
	}
	cfg.Results = cmp.Or(cfg.Results, DefaultResults)
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.MaxChars = cmp.Or(cfg.MaxChars, DefaultMaxChars)
	cfg.BaseURL = cmp.Or(strings.TrimSpace(cfg.BaseURL), DefaultBaseURL)
	endpoint, err := url.Parse(cfg.BaseURL)
	if err != nil || (endpoint.Scheme != "http" && endpoint.Scheme != "https") || endpoint.Host == "" || endpoint.User != nil {
		return nil, configErrorf("base_url", "base_url must be an http or https URL with a host and no user name, such as %s", DefaultBaseURL)
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if cfg.LookupEnv == nil {
		cfg.LookupEnv = os.LookupEnv
	}
	key := strings.TrimSpace(cfg.APIKey)
	if key == "" {
		v, _ := cfg.LookupEnv(cfg.APIKeyEnv)
		key = strings.TrimSpace(v)
	}
	if key == "" {
		return nil, &ConfigError{Key: "api_key_env", Err: fmt.Errorf("%w: set the environment variable %s to your SerpApi key (https://serpapi.com/manage-api-key), or name another variable with api_key_env",
			ErrMissingKey, cfg.APIKeyEnv)}
	}
	cfg.APIKey = ""
	return &Tool{cfg: cfg, key: key, endpoint: endpoint}, nil
}

// Name returns the tool name, "serpapi".
func (t *Tool) Name() string { return DefaultName }

// Description tells the model what the tool does and what input it takes.
func (t *Tool) Description() string {
	return fmt.Sprintf("Google web search through SerpApi, for current events and facts the other tools do not know. "+
		"Input: a search query, such as: population of Canada 2024. Returns Google's direct answer when it shows one, "+
		"otherwise its knowledge-graph summary, otherwise the top %d results with title, snippet and link.", t.cfg.Results)
}

// Schema declares the single string argument "query".
func (t *Tool) Schema() map[string]any {
	return tools.StringSchema("query", "What to search Google for, in the words a person would type.")
}

// Meta reports that searching has no side effects, reaches the network
// and is bounded by Config.Timeout.
func (t *Tool) Meta() tools.Meta {
	return tools.Meta{ReadOnly: true, Network: true, Timeout: t.cfg.Timeout}
}

// String describes the tool without its key, so printing it with %v
// leaks nothing.
func (t *Tool) String() string {
	return fmt.Sprintf("serpapi tool (%s, key from %s)", t.endpoint.Redacted(), t.cfg.APIKeyEnv)
}

// GoString is String, for %#v.
func (t *Tool) GoString() string { return t.String() }

// Call searches Google for the query in input, given as plain text, as
// the JSON object {"query": "..."} or as a JSON string, and returns the
// answer the results page gives (see the package documentation for the
// order). A blank or too long query fails with tools.ErrBadInput; SerpApi's
// refusals with ErrInvalidKey, ErrQuota, ErrServer or ErrAPI; an unreadable
// answer with ErrBadResponse; a search over Config.Timeout with ErrTimeout;
// a cancelled ctx with its error.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	q, err := parseQuery(input)
	if err != nil {
		return "", err
	}
	status, body, err := t.fetch(ctx, q)
	if err != nil {
		return "", err
	}
	var page response
	jsonErr := json.Unmarshal(body, &page)
	if err := t.statusError(status, page.Error, jsonErr); err != nil {
		return "", err
	}
	if jsonErr != nil {
		return "", fmt.Errorf("serpapi: %w: the answer is not a JSON object (%s)", ErrBadResponse, t.scrub(jsonErr.Error()))
	}
	obs := page.answer(t.cfg.Results)
	if obs == "" {
		obs = fmt.Sprintf("Google found no results for %q. Try other or fewer words.", q)
	}
	return textutil.Clip(t.scrub(obs), t.cfg.MaxChars), nil
}

// fetch sends the search and returns the response's status and body.
func (t *Tool) fetch(ctx context.Context, q string) (int, []byte, error) {
	u := *t.endpoint
	params := u.Query()
	params.Set("engine", "google")
	params.Set("q", q)
	params.Set("api_key", t.key)
	for k, v := range map[string]string{"location": t.cfg.Location, "hl": t.cfg.Language, "gl": t.cfg.Country} {
		if v = strings.TrimSpace(v); v != "" {
			params.Set(k, v)
		}
	}
	u.RawQuery = params.Encode()
	cctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, nil, fmt.Errorf("serpapi: %w: %s", ErrRequest, t.scrub(unwrapURLError(err).Error()))
	}
	req.Header.Set("Accept", "application/json")
	resp, err := t.cfg.Client.Do(req)
	if err != nil {
		return 0, nil, t.transportError(ctx, cctx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return 0, nil, t.transportError(ctx, cctx, err)
	}
	if len(body) > MaxResponseBytes {
		return 0, nil, fmt.Errorf("serpapi: %w: the answer is larger than %d bytes", ErrBadResponse, MaxResponseBytes)
	}
	return resp.StatusCode, body, nil
}

// transportError describes a failure to send the request or read the
// answer: the caller's cancellation, a timeout (the tool's or the
// caller's deadline), or ErrRequest. The *url.Error, whose text holds the
// URL and so the key, is dropped.
func (t *Tool) transportError(parent, cctx context.Context, err error) error {
	if cause := context.Cause(parent); cause != nil {
		if errors.Is(cause, context.DeadlineExceeded) {
			return fmt.Errorf("serpapi: %w: the caller's deadline passed: %w", ErrTimeout, cause)
		}
		return fmt.Errorf("serpapi: search stopped: %w", cause)
	}
	var ue *url.Error
	if errors.Is(cctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ue) && ue.Timeout()) {
		return fmt.Errorf("serpapi: %w after %s (SerpApi is slow or unreachable; try again, or raise the tool's timeout setting): %w",
			ErrTimeout, t.cfg.Timeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("serpapi: %w: %s (check the network and base_url)", ErrRequest, t.scrub(unwrapURLError(err).Error()))
}

// statusError maps SerpApi's answer to an error: by HTTP status first,
// then, for a 200 or another status, by the error message. SerpApi's "no
// results" message is not an error.
func (t *Tool) statusError(status int, msg string, jsonErr error) error {
	msg = t.scrub(textutil.Clip(textutil.OneLine(msg), 300))
	detail := msg
	if detail == "" {
		detail = http.StatusText(status)
	}
	lower := strings.ToLower(msg)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden || strings.Contains(lower, "invalid api key"):
		return fmt.Errorf("serpapi: %w (HTTP %d: %s): check the key in %s at https://serpapi.com/manage-api-key",
			ErrInvalidKey, status, detail, t.cfg.APIKeyEnv)
	case status == http.StatusTooManyRequests || strings.Contains(lower, "run out of searches") || strings.Contains(lower, "exhausted") ||
		strings.Contains(lower, "throughput"):
		return fmt.Errorf("serpapi: %w (HTTP %d: %s): wait for the hourly limit or the monthly quota to reset, or upgrade the plan at https://serpapi.com/manage-api-key",
			ErrQuota, status, detail)
	case status >= 500:
		return fmt.Errorf("serpapi: %w (HTTP %d: %s): SerpApi failed on its side; try again later", ErrServer, status, detail)
	case status != http.StatusOK:
		return fmt.Errorf("serpapi: %w (HTTP %d: %s)", ErrAPI, status, detail)
	case jsonErr != nil || msg == "" || isNoResults(lower):
		return nil
	}
	return fmt.Errorf("serpapi: %w: %s", ErrAPI, detail)
}

// isNoResults reports whether a lower-cased SerpApi error message says
// Google found nothing.
func isNoResults(lower string) bool {
	return strings.Contains(lower, "hasn't returned any results") || strings.Contains(lower, "has not returned any results")
}

// scrub removes the API key from s.
func (t *Tool) scrub(s string) string {
	if t.key == "" {
		return s
	}
	s = strings.ReplaceAll(s, t.key, "[REDACTED]")
	return strings.ReplaceAll(s, url.QueryEscape(t.key), "[REDACTED]")
}

// unwrapURLError returns the cause inside a *url.Error, whose own text
// holds the request URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}

// parseQuery extracts the query from a tool input: the "query" (or
// "input") field of a JSON object, a JSON string, or the trimmed text.
func parseQuery(input string) (string, error) {
	s := strings.TrimSpace(input)
	switch {
	case strings.HasPrefix(s, "{"):
		var args struct {
			Query string `json:"query"`
			Input string `json:"input"`
		}
		if err := json.Unmarshal([]byte(s), &args); err != nil {
			return "", fmt.Errorf("%w: give a search query as text or as {\"query\": \"...\"}: %w", tools.ErrBadInput, err)
		}
		s = strings.TrimSpace(args.Query)
		if s == "" {
			s = strings.TrimSpace(args.Input)
		}
	case strings.HasPrefix(s, `"`):
		var str string
		if json.Unmarshal([]byte(s), &str) == nil {
			s = strings.TrimSpace(str)
		}
	}
	s = tools.Unquote(s, "\"'`")
	if s == "" {
		return "", fmt.Errorf("%w: give a search query, such as: capital of Australia", tools.ErrBadInput)
	}
	if len(s) > MaxQueryLength {
		return "", fmt.Errorf("%w: the query is %d bytes long; Google takes at most %d", tools.ErrBadInput, len(s), MaxQueryLength)
	}
	return s, nil
}
