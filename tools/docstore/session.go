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

// noPage marks a session with no open page.
const noPage = -1

// NoMoreResults is the observation of a lookup that has no further match.
const NoMoreResults = "No more results."

// Session is one agent run's view of a Store: the open page and the lookup
// cursor. It is safe for concurrent use; calls are serialised.
type Session struct {
	store *Store

	mu sync.Mutex
	// page is the index of the open page, or noPage.
	page int
	// keyword and matches are the last lookup's keyword (as typed, trimmed)
	// and the sentences of the open page that contain it; next is the index
	// of the match the next lookup with the same keyword returns.
	keyword string
	matches []string
	next    int
}

// Search opens the page whose title matches entity (ignoring case, accents,
// punctuation, a leading "the" and a trailing "(qualifier)") and returns its
// first paragraph. When no single page matches it closes the open page and
// returns "Could not find <entity>. Similar: [<title>, ...]." listing the
// best search results. Either way the lookup cursor is reset. A blank entity
// fails with tools.ErrBadInput, a cancelled ctx with its error.
func (s *Session) Search(ctx context.Context, entity string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	entity = strings.TrimSpace(entity)
	if entity == "" {
		return "", fmt.Errorf("%w: empty entity; give the name of the page to open, for example \"Titan\"", tools.ErrBadInput)
	}
	i, found := s.store.find(entity)
	var obs string
	if found {
		obs = s.store.pages[i].first
		if obs == "" {
			obs = "The page " + s.store.pages[i].title + " has no text."
		}
	} else {
		i = noPage
		hits, err := s.store.idx.Search(ctx, entity, s.store.cfg.similar)
		if err != nil {
			return "", fmt.Errorf("search similar pages for %q: %w", entity, err)
		}
		if len(hits) == 0 {
			obs = "Could not find " + entity + ". No similar pages; try another name."
		} else {
			titles := make([]string, len(hits))
			for k, h := range hits {
				titles[k] = h.Doc.Title
			}
			obs = "Could not find " + entity + ". Similar: [" + strings.Join(titles, ", ") + "]."
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.page, s.keyword, s.matches, s.next = i, "", nil, 0
	return obs, nil
}

// Lookup returns the next sentence of the open page that contains keyword
// (ignoring case), as "(Result k / n) <sentence>": the k-th successive call
// with the same keyword returns the k-th of the n matching sentences, and a
// different keyword starts again at the first. When the matches are used up,
// or there are none, it returns NoMoreResults. Without an open page it says
// that a search must come first. A blank keyword fails with tools.ErrBadInput,
// a cancelled ctx with its error.
func (s *Session) Lookup(ctx context.Context, keyword string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	keyword = strings.TrimSpace(keyword)
	if keyword == "" {
		return "", fmt.Errorf("%w: empty keyword; give a word or phrase to find on the open page", tools.ErrBadInput)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.page == noPage {
		return "No page is open. Call " + s.store.cfg.searchName + " with the name of an entity first, then look up keywords on its page.", nil
	}
	if !strings.EqualFold(keyword, s.keyword) {
		s.keyword, s.next = keyword, 0
		s.matches = s.matches[:0]
		needle := strings.ToLower(keyword)
		for _, sent := range s.store.pages[s.page].sentences {
			if strings.Contains(strings.ToLower(sent), needle) {
				s.matches = append(s.matches, sent)
			}
		}
	}
	if s.next >= len(s.matches) {
		return NoMoreResults, nil
	}
	s.next++
	return "(Result " + strconv.Itoa(s.next) + " / " + strconv.Itoa(len(s.matches)) + ") " + s.matches[s.next-1], nil
}

// Page returns the title of the open page, or "" when none is open.
func (s *Session) Page() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.page == noPage {
		return ""
	}
	return s.store.pages[s.page].title
}

// SearchTool returns the session's page search tool.
func (s *Session) SearchTool() *SearchTool { return &SearchTool{s: s} }

// LookupTool returns the session's keyword lookup tool.
func (s *Session) LookupTool() *LookupTool { return &LookupTool{s: s} }

// Tools returns the session's two tools, search first, for registering with
// a run's tools.Registry.
func (s *Session) Tools() []tools.Tool { return []tools.Tool{s.SearchTool(), s.LookupTool()} }

// SearchTool is the Search[entity] tool of a Session. It implements
// tools.Tool, tools.Schemer and tools.MetaProvider.
type SearchTool struct{ s *Session }

// Name returns the configured search tool name ("search_page" by default).
func (t *SearchTool) Name() string { return t.s.store.cfg.searchName }

// Description tells the model what the tool does and what input it takes.
func (t *SearchTool) Description() string {
	return "Opens the page about an entity and returns its first paragraph. Input: the exact name of the entity " +
		"(for example \"Titan\"). If no page has that title, lists similar page titles to try instead. " +
		"Use " + t.s.store.cfg.lookupName + " afterwards to find sentences on the open page."
}

// Schema declares the single string argument "entity".
func (t *SearchTool) Schema() map[string]any {
	return tools.StringSchema("entity", "Name of the entity whose page to open, for example \"Titan\".")
}

// Meta reports a tool without external side effects that is nonetheless not
// read-only: it changes the session's open page, so calls must not be
// reordered, cached or deduplicated.
func (t *SearchTool) Meta() tools.Meta { return tools.Meta{} }

// Call runs Session.Search on input, given as plain text or as a JSON object
// with an "entity" field.
func (t *SearchTool) Call(ctx context.Context, input string) (string, error) {
	arg, err := argument(input, "entity")
	if err != nil {
		return "", err
	}
	return t.s.Search(ctx, arg)
}

// LookupTool is the Lookup[keyword] tool of a Session. It implements
// tools.Tool, tools.Schemer and tools.MetaProvider.
type LookupTool struct{ s *Session }

// Name returns the configured lookup tool name ("lookup" by default).
func (t *LookupTool) Name() string { return t.s.store.cfg.lookupName }

// Description tells the model what the tool does and what input it takes.
func (t *LookupTool) Description() string {
	return "Finds the next sentence containing a keyword on the page opened by " + t.s.store.cfg.searchName +
		". Input: a word or short phrase (for example \"born\"). Repeating the same keyword returns the next " +
		"matching sentence, as (Result k / n); \"" + NoMoreResults + "\" means there are no further matches."
}

// Schema declares the single string argument "keyword".
func (t *LookupTool) Schema() map[string]any {
	return tools.StringSchema("keyword", "Word or phrase to find on the open page, for example \"born\".")
}

// Meta reports a tool that is not read-only: each call advances the session's
// lookup cursor, so calls must not be reordered, cached or deduplicated.
func (t *LookupTool) Meta() tools.Meta { return tools.Meta{} }

// Call runs Session.Lookup on input, given as plain text or as a JSON object
// with a "keyword" field.
func (t *LookupTool) Call(ctx context.Context, input string) (string, error) {
	arg, err := argument(input, "keyword")
	if err != nil {
		return "", err
	}
	return t.s.Lookup(ctx, arg)
}

// argument extracts a tool argument from input: the named field of a JSON
// object (or its only field), a JSON string, or else the trimmed text. A JSON
// object without a usable string field fails with tools.ErrBadInput.
func argument(input, name string) (string, error) {
	s := strings.TrimSpace(input)
	switch {
	case strings.HasPrefix(s, "{"):
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &obj) != nil {
			return s, nil
		}
		raw, ok := obj[name]
		if !ok && len(obj) == 1 {
			for _, v := range obj {
				raw, ok = v, true
			}
		}
		var v string
		if !ok || json.Unmarshal(raw, &v) != nil {
			return "", fmt.Errorf("%w: JSON input needs a string field %q, as in {%q: \"Titan\"}", tools.ErrBadInput, name, name)
		}
		return v, nil
	case strings.HasPrefix(s, `"`):
		var v string
		if json.Unmarshal([]byte(s), &v) == nil {
			return v, nil
		}
	}
	return s, nil
}
