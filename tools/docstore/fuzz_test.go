package docstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/search"
)

// pagingOf describes how a format pages through lookup results: the
// prefix of the k-th of n results, the observation past the last one, and
// the observation when nothing matches.
func pagingOf(f Format) (prefix func(k, n int) string, noMore, none string) {
	switch f {
	case FormatWikiEnv:
		return func(k, n int) string { return fmt.Sprintf("(Result %d / %d) ", k, n) }, WikiEnvNoMoreResults, WikiEnvNoMoreResults
	case FormatLangChain:
		return func(k, n int) string { return fmt.Sprintf("(Result %d/%d) ", k, n) }, LangChainNoMoreResults, LangChainNoResults
	default:
		return func(k, n int) string { return fmt.Sprintf("(Result %d / %d) ", k, n) }, NoMoreResults, NoMoreResults
	}
}

// FuzzLookup opens a page with random text in each format and pages
// through a random keyword's results: no panic, valid UTF-8 throughout,
// results numbered 1..n, each a passage of the page that contains the
// keyword, and the no-more-results observation by call n+1.
func FuzzLookup(f *testing.F) {
	f.Add("Titan is a moon. It orbits Saturn.\nHuygens found it.\n\nThe Huygens probe landed there.", "huygens", uint8(0))
	f.Add("ΟΔΟΣ. Σ. İstanbul\n\nİ", "i̇", uint8(1))
	f.Add("a. . b.  c\n\n\n== H ==\nd", " ", uint8(2))
	f.Add("x\xffy. \x1cz", "\xff", uint8(1))
	f.Add("no match here", "zzz", uint8(2))
	f.Fuzz(func(t *testing.T, text, keyword string, which uint8) {
		format := Formats()[int(which)%len(Formats())]
		cfg, err := newConfig([]Option{WithFormat(format)})
		if err != nil {
			t.Fatal(err)
		}
		s := storeOf(nil, []search.Document{{ID: "1", Title: "Page", Text: text}}, cfg)
		p := s.pages[0]
		for _, part := range append(slices.Clone(p.parts), p.obs, p.first) {
			if !utf8.ValidString(part) {
				t.Fatalf("%s: invalid UTF-8 in page passage %q", format, part)
			}
		}
		ctx := context.Background()
		c := newCursor()
		c.page = 0
		prefix, noMore, none := pagingOf(format)
		passages := p.parts
		needle := pyLower(validUTF8(keyword))
		if format == FormatDefault {
			passages = p.sentences
			needle = strings.ToLower(strings.TrimSpace(validUTF8(keyword)))
		}

		out, err := s.lookup(ctx, c, keyword)
		if strings.TrimSpace(keyword) == "" {
			if !errors.Is(err, tools.ErrBadInput) {
				t.Fatalf("%s: blank keyword %q: want ErrBadInput, got %q, %v", format, keyword, out, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%s: lookup %q: %v", format, keyword, err)
		}
		if out == none {
			return
		}
		var n int
		if _, err := fmt.Sscanf(strings.ReplaceAll(out, "/", " / "), "(Result 1 / %d)", &n); err != nil || n < 1 || n > len(passages) {
			t.Fatalf("%s: first lookup of %q: %q", format, keyword, out)
		}
		for k := 1; k <= n+1; k++ {
			if k > 1 {
				if out, err = s.lookup(ctx, c, keyword); err != nil {
					t.Fatalf("%s: lookup %d of %q: %v", format, k, keyword, err)
				}
			}
			if !utf8.ValidString(out) {
				t.Fatalf("%s: lookup %d of %q: invalid UTF-8 %q", format, k, keyword, out)
			}
			if k == n+1 {
				if out != noMore {
					t.Fatalf("%s: lookup %d of %q past %d results: %q", format, k, keyword, n, out)
				}
				break
			}
			passage, ok := strings.CutPrefix(out, prefix(k, n))
			if !ok {
				t.Fatalf("%s: lookup %d of %q: want prefix %q, got %q", format, k, keyword, prefix(k, n), out)
			}
			if !slices.Contains(passages, passage) {
				t.Fatalf("%s: lookup %d of %q: %q is not a passage of the page", format, k, keyword, passage)
			}
			low := pyLower(passage)
			if format == FormatDefault {
				low = strings.ToLower(passage)
			}
			if !strings.Contains(low, needle) {
				t.Fatalf("%s: lookup %d of %q: %q does not contain it", format, k, keyword, passage)
			}
		}
		if out, _ = s.lookup(ctx, c, keyword); out != noMore {
			t.Fatalf("%s: lookup of %q after the end: %q", format, keyword, out)
		}
	})
}
