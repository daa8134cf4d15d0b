package docstore

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/tools/search"
)

// Observations of the langchain format's lookup, as DocstoreExplorer
// returns them.
const (
	// LangChainNoResults is the observation of a lookup whose term is on
	// no paragraph of the open page.
	LangChainNoResults = "No Results"
	// LangChainNoMoreResults is the observation of a lookup that has gone
	// past the last matching paragraph.
	LangChainNoMoreResults = "No More Results"
)

// ErrNoPage is the error of a lookup before any successful search in the
// langchain format, where DocstoreExplorer raises a ValueError with this
// very message.
//
//lint:ignore ST1005 the message is LangChain's, word for word.
var ErrNoPage = errors.New("Cannot lookup without a successful search first")

// langChainPage splits a document as DocstoreExplorer splits a page's
// content: paragraphs are the pieces between "\n\n", kept exactly as they
// are (blank ones and line breaks included), and a search shows the first.
func langChainPage(d search.Document) page {
	text := validUTF8(d.Text)
	p := page{title: d.Title, disambiguation: strings.Contains(text, disambiguationMark), parts: strings.Split(text, "\n\n")}
	p.obs = p.parts[0]
	p.lower = make([]string, len(p.parts))
	for i, s := range p.parts {
		p.lower[i] = pyLower(s)
	}
	return p
}

// langChainSearch is DocstoreExplorer.search over LangChain's Wikipedia
// docstore. The page whose title matches term (see wikiTitles) opens; if
// none does, and no failed search for term is recorded, auto-suggest (when
// on) opens the best search result, as wikipedia.page does. A
// disambiguation page does not open. When no page opens, the open page is
// closed and the observation is "Could not find [<term>]. Similar: <Python
// list>", with no full stop. The lookup term and index are never reset,
// as DocstoreExplorer never resets them.
func (s *Store) langChainSearch(ctx context.Context, c *cursor, term string) (string, error) {
	i, ok := s.titles.find(titleKey(term))
	if !ok {
		if _, rec := s.recorded(term); !rec && s.cfg.autoSuggest {
			var err error
			if i, ok, err = s.topHit(ctx, term); err != nil {
				return "", err
			}
		}
	}
	if ok && !s.pages[i].disambiguation {
		c.page = i
		return s.pages[i].obs, nil
	}
	titles, err := s.similarTitles(ctx, term, term)
	if err != nil {
		return "", err
	}
	c.page = noPage
	return "Could not find [" + term + "]. Similar: " + pyListRepr(titles), nil
}

// langChainLookup is DocstoreExplorer.lookup. The term is lower-cased; the
// same term as last time moves to the next match, another term starts at
// the first. It returns "(Result k/n) paragraph" for the k-th of the n
// paragraphs of the open page that contain the term (compared in lower
// case), LangChainNoResults when none does, and LangChainNoMoreResults past
// the last. With no page open it fails with ErrNoPage.
func (s *Store) langChainLookup(c *cursor, term string) (string, error) {
	if c.page == noPage {
		return "", ErrNoPage
	}
	t := pyLower(term)
	if t != c.keyword {
		c.keyword, c.next = t, 0
	} else {
		c.next++
	}
	p := &s.pages[c.page]
	// DocstoreExplorer filters the paragraphs on every call; the list
	// only changes with the page or the term, so it is kept until then.
	if !c.hasKeyword || c.listPage != c.page || c.listTerm != t {
		c.hasKeyword, c.listPage, c.listTerm, c.matches = true, c.page, t, c.matches[:0]
		for j, low := range p.lower {
			if strings.Contains(low, t) {
				c.matches = append(c.matches, j)
			}
		}
	}
	switch n := len(c.matches); {
	case n == 0:
		return LangChainNoResults, nil
	case c.next >= n:
		return LangChainNoMoreResults, nil
	default:
		return "(Result " + strconv.Itoa(c.next+1) + "/" + strconv.Itoa(n) + ") " + p.parts[c.matches[c.next]], nil
	}
}
