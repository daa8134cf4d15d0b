package docstore

import (
	"context"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/planner-engine/planner/tools/search"
)

// WikiEnvNoMoreResults is the wikienv format's observation of a lookup
// with no further match, trailing line break included, as wikienv.py
// returns it.
const WikiEnvNoMoreResults = "No more results.\n"

// wikiEnvObsSentences is how many sentences a wikienv search shows.
const wikiEnvObsSentences = 5

// disambiguationMark is the phrase by which WikiEnv (and, locally, the
// langchain format) recognise a disambiguation page.
const disambiguationMark = "may refer to:"

// wikiEnvPage splits a document as wikienv.py splits a page: each line is a
// paragraph (blank lines dropped, the rest stripped), each paragraph is cut
// at every ". ", and each non-blank piece, stripped, gets a "." appended,
// so that a paragraph's last sentence ends in "..". A search shows the first
// five of these sentences joined by spaces; a lookup walks all of them.
func wikiEnvPage(d search.Document) page {
	text := validUTF8(d.Text)
	p := page{title: d.Title, disambiguation: strings.Contains(text, disambiguationMark)}
	for _, para := range strings.Split(text, "\n") {
		if para = pyStrip(para); para == "" {
			continue
		}
		for _, piece := range strings.Split(para, ". ") {
			if piece = pyStrip(piece); piece != "" {
				p.parts = append(p.parts, piece+".")
			}
		}
	}
	p.obs = strings.Join(p.parts[:min(len(p.parts), wikiEnvObsSentences)], " ")
	p.lower = make([]string, len(p.parts))
	for i, s := range p.parts {
		p.lower[i] = pyLower(s)
	}
	return p
}

// wikiEnvSearch is WikiEnv's search_step. A page whose title matches the
// query Wikipedia would receive (see wikiQuery and wikiTitles) opens, and
// the lookup state is reset; a disambiguation page is searched again as
// "[entity]", which never matches a title. Otherwise the observation is
// "Could not find <entity>. Similar: <Python list>." and the open page and
// lookup state are left as they were, as wikienv.py leaves them.
func (s *Store) wikiEnvSearch(ctx context.Context, c *cursor, entity string) (string, error) {
	q := wikiQuery(entity)
	if key := titleKey(q); validTitle(key) {
		if i, ok := s.titles.find(key); ok {
			if s.pages[i].disambiguation {
				return s.wikiEnvSearch(ctx, c, "["+entity+"]")
			}
			c.page, c.hasKeyword, c.keyword, c.matches, c.next = i, false, "", nil, 0
			return s.pages[i].obs, nil
		}
	}
	titles, err := s.similarTitles(ctx, entity, q)
	if err != nil {
		return "", err
	}
	return "Could not find " + entity + ". Similar: " + pyListRepr(titles) + ".", nil
}

// wikiEnvLookup is WikiEnv's lookup step. A keyword other than the last one
// (compared exactly, so "Born" after "born" starts again) rebuilds the list
// of the open page's sentences that contain it, compared case-insensitively;
// each call returns the next as "(Result k / n) sentence", then
// WikiEnvNoMoreResults. With no page open the list is empty.
func (s *Store) wikiEnvLookup(c *cursor, keyword string) string {
	if !c.hasKeyword || c.keyword != keyword {
		c.hasKeyword, c.keyword, c.next, c.matches = true, keyword, 0, c.matches[:0]
		if c.page != noPage {
			needle := pyLower(keyword)
			for j, low := range s.pages[c.page].lower {
				if strings.Contains(low, needle) {
					c.matches = append(c.matches, j)
				}
			}
		}
	}
	if c.next >= len(c.matches) {
		return WikiEnvNoMoreResults
	}
	c.next++
	return "(Result " + strconv.Itoa(c.next) + " / " + strconv.Itoa(len(c.matches)) + ") " + s.pages[c.page].parts[c.matches[c.next-1]]
}

// wikiQuery returns the search text Wikipedia receives for an entity that
// wikienv.py puts into the URL ".../index.php?search=" with its spaces
// replaced by "+": the URL fragment ("#...") is not sent, a "&" ends the
// parameter, "+" reads as a space (so a literal "+" does too), and %XX
// escapes are decoded, unless the entity holds a "%" followed by two
// letters or digits that are not hexadecimal, in which case the requests
// library escapes every "%" and none is decoded.
func wikiQuery(entity string) string {
	q := entity
	if i := strings.IndexByte(q, '#'); i >= 0 {
		q = q[:i]
	}
	if i := strings.IndexByte(q, '&'); i >= 0 {
		q = q[:i]
	}
	decode := !badEscape(q)
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		switch {
		case q[i] == '+':
			b.WriteByte(' ')
		case decode && q[i] == '%' && i+2 < len(q) && isHex(q[i+1]) && isHex(q[i+2]):
			v, _ := strconv.ParseUint(q[i+1:i+3], 16, 8)
			b.WriteByte(byte(v))
			i += 2
		default:
			b.WriteByte(q[i])
		}
	}
	return validUTF8(b.String())
}

// badEscape reports whether q holds a "%" followed by two letters or
// digits that Python's int(h, 16) rejects, which makes requests give up
// unquoting and escape every "%" instead.
func badEscape(q string) bool {
	for i := 0; i < len(q); i++ {
		if q[i] != '%' {
			continue
		}
		r1, n1 := utf8.DecodeRuneInString(q[i+1:])
		r2, _ := utf8.DecodeRuneInString(q[i+1+n1:])
		if n1 == 0 || !isAlnum(r1) || !isAlnum(r2) {
			continue
		}
		if !hexDigit(r1) || !hexDigit(r2) {
			return true
		}
	}
	return false
}

// isAlnum is Python's str.isalnum for one character.
func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

// hexDigit reports whether Python's int(..., 16) accepts r as a digit: an
// ASCII hexadecimal digit or any decimal digit.
func hexDigit(r rune) bool { return (r < utf8.RuneSelf && isHex(byte(r))) || unicode.Is(unicode.Nd, r) }

// isHex reports whether c is an ASCII hexadecimal digit.
func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// titleKey normalises a title the way MediaWiki does before looking it up:
// bidirectional marks removed, runs of white space and underscores read as
// one space, the ends trimmed, a leading ":" dropped, and the first letter
// upper-cased.
func titleKey(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e):
		case r == '_' || unicode.IsSpace(r):
			space = true
		default:
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		}
	}
	t := b.String()
	if rest, ok := strings.CutPrefix(t, ":"); ok {
		t = strings.TrimLeft(rest, " ")
	}
	if r, n := utf8.DecodeRuneInString(t); n > 0 {
		t = string(unicode.ToUpper(r)) + t[n:]
	}
	return t
}

// validTitle reports whether MediaWiki accepts key (from titleKey) as a
// page title. Wikipedia shows search results, never a page, for a query
// that is not a valid title, such as one with square brackets.
func validTitle(key string) bool {
	switch {
	case key == "" || len(key) > 255 || key == "." || key == "..":
		return false
	case strings.ContainsAny(key, "#<>[]|{}\uFFFD"), strings.Contains(key, "~~~"):
		return false
	case strings.HasPrefix(key, "./") || strings.HasPrefix(key, "../") || strings.Contains(key, "/./") ||
		strings.Contains(key, "/../") || strings.HasSuffix(key, "/.") || strings.HasSuffix(key, "/.."):
		return false
	}
	for i, r := range key {
		if r < ' ' || r == 0x7f {
			return false
		}
		if r == '%' && i+2 < len(key) && isHex(key[i+1]) && isHex(key[i+2]) {
			return false
		}
	}
	return true
}

// wikiTitles finds the page for a title key as Wikipedia's "go to page"
// does: the exact title first, then a title equal but for case, then one
// equal but for case and accents. Within a level the first page in corpus
// order wins.
type wikiTitles struct {
	exact, lower, folded map[string]int
}

// newWikiTitles returns an empty wikiTitles sized for n pages.
func newWikiTitles(n int) wikiTitles {
	return wikiTitles{exact: make(map[string]int, n), lower: make(map[string]int, n), folded: make(map[string]int, n)}
}

// add registers page i under title.
func (w wikiTitles) add(title string, i int) {
	k := titleKey(title)
	if k == "" {
		return
	}
	putFirst(w.exact, k, i)
	putFirst(w.lower, pyLower(k), i)
	putFirst(w.folded, pyLower(foldAccents(k)), i)
}

// find returns the page whose title matches key (from titleKey).
func (w wikiTitles) find(key string) (int, bool) {
	if key == "" {
		return 0, false
	}
	if i, ok := w.exact[key]; ok {
		return i, true
	}
	if i, ok := w.lower[pyLower(key)]; ok {
		return i, true
	}
	i, ok := w.folded[pyLower(foldAccents(key))]
	return i, ok
}

// putFirst sets m[k] = v unless k is already set.
func putFirst(m map[string]int, k string, v int) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}
