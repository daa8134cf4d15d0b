package docstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/planner-engine/planner/tools"
)

// noPage marks a cursor with no open page.
const noPage = -1

// NoMoreResults is the default format's observation of a lookup that has no
// further match.
const NoMoreResults = "No more results."

// cursor is the per-run state of a store's tools: the open page and the
// lookup position. Its fields are guarded by mu; every search and lookup
// holds mu throughout, so the calls of one run are serialised.
type cursor struct {
	mu sync.Mutex
	// page is the index of the open page, or noPage.
	page int
	// keyword is the last lookup's keyword: trimmed (default format), as
	// given (wikienv) or lower-cased (langchain's lookup_str); hasKeyword
	// is false until a lookup sets it and, in the wikienv format, again
	// after a successful search (lookup_keyword = None), and in the
	// langchain format says whether matches holds the list of listPage
	// and listTerm.
	keyword    string
	hasKeyword bool
	// matches are the indices of the open page's passages that contain
	// keyword; next is how many of them earlier lookups returned (in the
	// langchain format, the lookup index).
	matches []int
	next    int
	// listPage and listTerm are the page and the term of matches in the
	// langchain format, where a search keeps the term and the index.
	listPage int
	listTerm string
}

// newCursor returns a cursor with no page open.
func newCursor() *cursor { return &cursor{page: noPage} }

// stateKey is the key of a store's cursor in a tools.RunState.
type stateKey struct{ s *Store }

// runCursor returns the cursor of the run ctx belongs to, or a fresh one
// when ctx carries no tools.RunState.
func (s *Store) runCursor(ctx context.Context) *cursor {
	return tools.State(ctx, stateKey{s}, newCursor)
}

// search runs a search in s's format on cursor c.
func (s *Store) search(ctx context.Context, c *cursor, entity string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if strings.TrimSpace(entity) == "" {
		return "", fmt.Errorf("%w: empty entity; give the name of the page to open, for example \"Titan\"", tools.ErrBadInput)
	}
	entity = validUTF8(entity)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s.cfg.format {
	case FormatWikiEnv:
		return s.wikiEnvSearch(ctx, c, entity)
	case FormatLangChain:
		return s.langChainSearch(ctx, c, entity)
	default:
		return s.defaultSearch(ctx, c, strings.TrimSpace(entity))
	}
}

// lookup runs a lookup in s's format on cursor c.
func (s *Store) lookup(ctx context.Context, c *cursor, keyword string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if strings.TrimSpace(keyword) == "" {
		return "", fmt.Errorf("%w: empty keyword; give a word or phrase to find on the open page", tools.ErrBadInput)
	}
	keyword = validUTF8(keyword)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s.cfg.format {
	case FormatWikiEnv:
		return s.wikiEnvLookup(c, keyword), nil
	case FormatLangChain:
		return s.langChainLookup(c, keyword)
	default:
		return s.defaultLookup(c, strings.TrimSpace(keyword)), nil
	}
}

// defaultSearch opens the page whose title matches entity loosely (see
// find) and returns its first paragraph, or closes the open page and lists
// similar titles. Either way the lookup cursor is reset.
func (s *Store) defaultSearch(ctx context.Context, c *cursor, entity string) (string, error) {
	i, found := s.find(entity)
	var obs string
	if found {
		obs = s.pages[i].first
		if obs == "" {
			obs = "The page " + s.pages[i].title + " has no text."
		}
	} else {
		i = noPage
		titles, err := s.similarTitles(ctx, entity, entity)
		if err != nil {
			return "", err
		}
		if len(titles) == 0 {
			obs = "Could not find " + entity + ". No similar pages; try another name."
		} else {
			obs = "Could not find " + entity + ". Similar: [" + strings.Join(titles, ", ") + "]."
		}
	}
	c.page, c.keyword, c.matches, c.next = i, "", c.matches[:0], 0
	return obs, nil
}

// defaultLookup returns the next sentence of the open page that contains
// keyword (ignoring case) as "(Result k / n) sentence", then NoMoreResults;
// another keyword (ignoring case) starts again at the first.
func (s *Store) defaultLookup(c *cursor, keyword string) string {
	if c.page == noPage {
		return "No page is open. Call " + s.cfg.searchName + " with the name of an entity first, then look up keywords on its page."
	}
	sents := s.pages[c.page].sentences
	if !strings.EqualFold(keyword, c.keyword) {
		c.keyword, c.next, c.matches = keyword, 0, c.matches[:0]
		needle := strings.ToLower(keyword)
		for j, sent := range sents {
			if strings.Contains(strings.ToLower(sent), needle) {
				c.matches = append(c.matches, j)
			}
		}
	}
	if c.next >= len(c.matches) {
		return NoMoreResults
	}
	c.next++
	return "(Result " + strconv.Itoa(c.next) + " / " + strconv.Itoa(len(c.matches)) + ") " + sents[c.matches[c.next-1]]
}

// Session is one agent run's view of a Store, for Go callers that drive the
// tools themselves: it holds its own open page and lookup cursor, whatever
// the context carries. It is safe for concurrent use; calls are
// serialised.
type Session struct {
	store *Store
	cur   *cursor
}

// NewSession starts a session with no page open.
func (s *Store) NewSession() *Session { return &Session{store: s, cur: newCursor()} }

// Search searches for entity in the store's format (see the package
// documentation and the Format constants). In the default format it opens
// the page whose title matches entity (ignoring case, accents, punctuation,
// a leading "the" and a trailing "(qualifier)") and returns its first
// paragraph; when no single page matches it closes the open page and
// returns "Could not find <entity>. Similar: [<title>, ...]." listing
// recorded or best-ranked titles. A blank entity fails with
// tools.ErrBadInput, a cancelled ctx with its error.
func (s *Session) Search(ctx context.Context, entity string) (string, error) {
	return s.store.search(ctx, s.cur, entity)
}

// Lookup looks keyword up on the open page in the store's format. In the
// default format it returns the next sentence that contains keyword
// (ignoring case) as "(Result k / n) <sentence>": the k-th successive call
// with the same keyword returns the k-th of the n matching sentences, and a
// different keyword starts again at the first; past the last, or with no
// match, it returns NoMoreResults, and with no page open it says that a
// search must come first. A blank keyword fails with tools.ErrBadInput, a
// cancelled ctx with its error; in the langchain format a lookup with no
// page open fails with ErrNoPage.
func (s *Session) Lookup(ctx context.Context, keyword string) (string, error) {
	return s.store.lookup(ctx, s.cur, keyword)
}

// Page returns the title of the open page, or "" when none is open.
func (s *Session) Page() string {
	s.cur.mu.Lock()
	defer s.cur.mu.Unlock()
	if s.cur.page == noPage {
		return ""
	}
	return s.store.pages[s.cur.page].title
}

// SearchTool returns a search tool bound to the session's state.
func (s *Session) SearchTool() *SearchTool { return &SearchTool{store: s.store, cur: s.cur} }

// LookupTool returns a lookup tool bound to the session's state.
func (s *Session) LookupTool() *LookupTool { return &LookupTool{store: s.store, cur: s.cur} }

// Tools returns the session's two tools, search first.
func (s *Session) Tools() []tools.Tool { return []tools.Tool{s.SearchTool(), s.LookupTool()} }

// SearchTool returns the store's shared search tool, which keeps each
// run's state in that run's tools.RunState.
func (s *Store) SearchTool() *SearchTool { return &SearchTool{store: s} }

// LookupTool returns the store's shared lookup tool, which keeps each
// run's state in that run's tools.RunState.
func (s *Store) LookupTool() *LookupTool { return &LookupTool{store: s} }

// Tools returns the store's two shared tools, search first, for registering
// once with a pipeline whose runs attach a tools.RunState to their
// contexts. A call whose context has no RunState starts from a fresh
// state: no page open.
func (s *Store) Tools() []tools.Tool { return []tools.Tool{s.SearchTool(), s.LookupTool()} }

// SearchTool is the Search[entity] tool of a Store or a Session. It
// implements tools.Tool, tools.Schemer and tools.MetaProvider and is safe
// for concurrent use.
type SearchTool struct {
	store *Store
	// cur is the session's cursor, or nil to use the run's.
	cur *cursor
}

// cursor returns the state the tool works on.
func (t *SearchTool) cursor(ctx context.Context) *cursor {
	if t.cur != nil {
		return t.cur
	}
	return t.store.runCursor(ctx)
}

// Name returns the configured search tool name ("search_page" by default).
func (t *SearchTool) Name() string { return t.store.cfg.searchName }

// Description tells the model what the tool does and what input it takes.
func (t *SearchTool) Description() string {
	cfg := t.store.cfg
	switch cfg.format {
	case FormatWikiEnv:
		return "Searches for the exact entity and returns the first five sentences of its page if it exists; if not, " +
			"lists similar entities to search instead. Input: the entity name, for example \"Titan\". Use " +
			cfg.lookupName + " afterwards to find sentences on the page."
	case FormatLangChain:
		return "Searches the docstore for a term and returns the summary of its page, or similar terms if there is " +
			"none. Input: the term, for example \"Titan\". Use " + cfg.lookupName + " afterwards to find paragraphs on the page."
	default:
		return "Opens the page about an entity and returns its first paragraph. Input: the exact name of the entity " +
			"(for example \"Titan\"). If no page has that title, lists similar page titles to try instead. " +
			"Use " + cfg.lookupName + " afterwards to find sentences on the open page."
	}
}

// Schema declares the single string argument "entity".
func (t *SearchTool) Schema() map[string]any {
	return tools.StringSchema("entity", "Name of the entity whose page to open, for example \"Titan\".")
}

// Meta reports a stateful tool that is not read-only: it changes the run's
// open page, so its calls must not be reordered, cached or deduplicated,
// and a resumed run replays them.
func (t *SearchTool) Meta() tools.Meta { return tools.Meta{Stateful: true} }

// Call searches for the entity in input, given as plain text or as a JSON
// object with an "entity" field (or a JSON string). The default format
// trims the entity; the wikienv and langchain formats keep it as given.
func (t *SearchTool) Call(ctx context.Context, input string) (string, error) {
	arg, err := argument(input, "entity", t.store.cfg.format == FormatDefault)
	if err != nil {
		return "", err
	}
	return t.store.search(ctx, t.cursor(ctx), arg)
}

// LookupTool is the Lookup[keyword] tool of a Store or a Session. It
// implements tools.Tool, tools.Schemer and tools.MetaProvider and is safe
// for concurrent use.
type LookupTool struct {
	store *Store
	// cur is the session's cursor, or nil to use the run's.
	cur *cursor
}

// cursor returns the state the tool works on.
func (t *LookupTool) cursor(ctx context.Context) *cursor {
	if t.cur != nil {
		return t.cur
	}
	return t.store.runCursor(ctx)
}

// Name returns the configured lookup tool name ("lookup" by default).
func (t *LookupTool) Name() string { return t.store.cfg.lookupName }

// Description tells the model what the tool does and what input it takes.
func (t *LookupTool) Description() string {
	cfg := t.store.cfg
	switch cfg.format {
	case FormatWikiEnv:
		return "Returns the next sentence containing the keyword on the page the last successful " + cfg.searchName +
			" opened, as (Result k / n); repeating the keyword moves on to the next match. Input: a keyword, for example \"born\"."
	case FormatLangChain:
		return "Returns the next paragraph containing the term on the page the last " + cfg.searchName +
			" opened, as (Result k/n); repeating the term moves on to the next match. Input: a term, for example \"born\"."
	default:
		return "Finds the next sentence containing a keyword on the page opened by " + cfg.searchName +
			". Input: a word or short phrase (for example \"born\"). Repeating the same keyword returns the next " +
			"matching sentence, as (Result k / n); \"" + NoMoreResults + "\" means there are no further matches."
	}
}

// Schema declares the single string argument "keyword".
func (t *LookupTool) Schema() map[string]any {
	return tools.StringSchema("keyword", "Word or phrase to find on the open page, for example \"born\".")
}

// Meta reports a stateful tool that is not read-only: each call advances
// the run's lookup cursor, so its calls must not be reordered, cached or
// deduplicated, and a resumed run replays them.
func (t *LookupTool) Meta() tools.Meta { return tools.Meta{Stateful: true} }

// Call looks up the keyword in input, given as plain text or as a JSON
// object with a "keyword" field (or a JSON string). The default format
// trims the keyword; the wikienv and langchain formats keep it as given.
func (t *LookupTool) Call(ctx context.Context, input string) (string, error) {
	arg, err := argument(input, "keyword", t.store.cfg.format == FormatDefault)
	if err != nil {
		return "", err
	}
	return t.store.lookup(ctx, t.cursor(ctx), arg)
}

// argument extracts a tool argument from input: the named field of a JSON
// object (or its only field); else, when trim is set (the default format),
// a JSON string's value or the trimmed text; and otherwise (wikienv,
// langchain) the text exactly as given, quotes included, as the papers'
// harnesses passed Search["Love the Way You Lie"]. A JSON object without
// a usable string field fails with tools.ErrBadInput.
func argument(input, name string, trim bool) (string, error) {
	s := strings.TrimSpace(input)
	if v, ok, err := objectArgument(s, name); ok || err != nil {
		return v, err
	}
	if !trim {
		return input, nil
	}
	if strings.HasPrefix(s, `"`) {
		var v string
		if json.Unmarshal([]byte(s), &v) == nil {
			return v, nil
		}
	}
	return s, nil
}

// objectArgument reads the argument name from s when s is a JSON object:
// its field name, or its only field. ok is false when s is not a JSON
// object; an object without a usable string field is an error.
func objectArgument(s, name string) (v string, ok bool, err error) {
	var obj map[string]json.RawMessage
	if !strings.HasPrefix(s, "{") || json.Unmarshal([]byte(s), &obj) != nil {
		return "", false, nil
	}
	raw, found := obj[name]
	if !found && len(obj) == 1 {
		for _, only := range obj {
			raw, found = only, true
		}
	}
	if !found || json.Unmarshal(raw, &v) != nil {
		return "", true, fmt.Errorf("%w: JSON input needs a string field %q, as in {%q: \"Titan\"}", tools.ErrBadInput, name, name)
	}
	return v, true, nil
}
