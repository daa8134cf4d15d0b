package httpfetch

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxLinkLength is the longest link URL HTMLToText shows; longer ones
// (tracking links, data-laden queries) are left out.
const maxLinkLength = 300

// maxListIndent caps the indentation of nested list items, in levels.
const maxListIndent = 3

// TextOptions configures HTMLToText. The zero value is ready to use.
type TextOptions struct {
	// Links writes each link as "text (url)": only http and https links
	// whose URL differs from their text, each URL once per document,
	// without its #fragment, and none longer than 300 bytes. Default
	// false: link text only.
	Links bool
	// Base is the page's URL, against which relative links resolve.
	// Default nil: only absolute links are shown.
	Base *url.URL
}

// HTMLToText reduces an HTML document to readable, compact text. The
// document's title comes first, on a line of its own; scripts, styles,
// <noscript>, <template>, SVG, the <head>, embedded media, form controls
// and elements marked hidden are dropped; block elements (paragraphs,
// headings, divisions, table rows, ...) start new lines and paragraphs a
// blank line; headings are marked "# " to "###### ", unordered list items
// "- " and ordered ones "1. ", nested lists indented; table cells are
// separated by " | "; a superscript is written ^23 (a footnote mark such
// as [1] as it is); with opts.Links a link is "text (url)"; <pre> keeps its line breaks and spaces, and
// elsewhere runs of white space become one space. Entities are decoded
// and control characters dropped; the result is valid UTF-8 even when src
// is not. src is parsed as HTML5 is; a document nested too deeply for the
// parser (over 512 open elements) is reduced by a simpler tag-stripping
// pass.
func HTMLToText(src string, opts TextOptions) string {
	c := converter{opts: opts}
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		stripTags(&c.w, src)
		return c.w.String()
	}
	if title := findTitle(doc); title != nil {
		c.children(title)
		c.w.block(2)
	}
	c.walk(doc)
	return c.w.String()
}

// textWriter collects text, collapsing white space and owing line breaks,
// separators and line markers until visible text follows, so that empty
// elements leave nothing behind and the output neither starts nor ends
// with blank lines.
type textWriter struct {
	b       strings.Builder
	nl      int    // line breaks owed before the next text, 0 to 2
	space   bool   // a space is owed before the next text on the line
	sep     string // a separator owed instead of the space
	prefix  string // a marker owed at the start of the next line
	midLine bool   // the output does not end at a line start
	pre     int    // >0 inside <pre>: white space is kept
	glue    bool   // white space before the next text is dropped
}

func (w *textWriter) String() string { return w.b.String() }

// flush writes what is owed before a visible character.
func (w *textWriter) flush() {
	if w.nl > 0 && w.b.Len() > 0 {
		for range w.nl {
			w.b.WriteByte('\n')
		}
		w.midLine = false
	}
	w.nl = 0
	switch {
	case w.prefix != "" && !w.midLine:
		w.b.WriteString(w.prefix)
	case !w.midLine:
	case w.sep != "":
		w.b.WriteString(w.sep)
	case w.space:
		w.b.WriteByte(' ')
	}
	w.prefix, w.sep, w.space, w.glue = "", "", false, false
	w.midLine = true
}

// text writes s, collapsing its white space (or keeping it inside <pre>).
func (w *textWriter) text(s string) {
	for _, r := range s {
		switch {
		case w.pre > 0 && r == '\n':
			w.br()
		case w.pre > 0 && (r == ' ' || r == '\t'):
			w.flush()
			w.b.WriteRune(r)
		case unicode.IsSpace(r):
			w.space = !w.glue
		case unicode.IsControl(r):
		default:
			w.flush()
			w.b.WriteRune(r)
		}
	}
}

// raw writes s as it is on the current line, after what is owed; s must
// be valid UTF-8 without line breaks.
func (w *textWriter) raw(s string) {
	w.flush()
	w.b.WriteString(s)
}

// block owes n line breaks (1: a new line, 2: a blank line).
func (w *textWriter) block(n int) {
	w.nl = max(w.nl, n)
	w.space, w.sep = false, ""
}

// br owes one more line break, up to a blank line.
func (w *textWriter) br() {
	w.nl = min(w.nl+1, 2)
	w.space, w.sep = false, ""
}

// converter walks a parsed document into a textWriter.
type converter struct {
	w     textWriter
	opts  TextOptions
	seen  map[string]bool // link URLs already shown
	lists []listState
}

type listState struct {
	ordered bool
	n       int
}

func (c *converter) children(n *html.Node) {
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		c.walk(ch)
	}
}

func (c *converter) walk(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		c.w.text(n.Data)
		return
	case html.DocumentNode:
		c.children(n)
		return
	case html.ElementNode:
	default: // comments, doctypes
		return
	}
	if dropped(n) {
		return
	}
	if n.Namespace != "" { // MathML: its text, inline
		c.children(n)
		return
	}
	switch a := n.DataAtom; a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		c.w.block(2)
		c.w.prefix = strings.Repeat("#", int(a.String()[1]-'0')) + " "
		c.children(n)
		c.w.block(2)
	case atom.P, atom.Blockquote, atom.Table, atom.Figure, atom.Hr:
		c.w.block(2)
		c.children(n)
		c.w.block(2)
	case atom.Pre, atom.Listing, atom.Xmp, atom.Plaintext:
		c.w.block(2)
		c.w.pre++
		c.children(n)
		c.w.pre--
		c.w.block(2)
	case atom.Br:
		c.w.br()
	case atom.Ul, atom.Ol, atom.Menu:
		c.w.block(1)
		c.lists = append(c.lists, listState{ordered: a == atom.Ol})
		c.children(n)
		c.lists = c.lists[:len(c.lists)-1]
		c.w.block(1)
	case atom.Li:
		c.w.block(1)
		c.w.prefix = c.marker()
		c.children(n)
		c.w.block(1)
	case atom.Tr:
		c.w.block(1)
		cell := 0
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			if ch.Type == html.ElementNode && (ch.DataAtom == atom.Td || ch.DataAtom == atom.Th) {
				if cell > 0 {
					c.w.sep = " | "
				}
				cell++
			}
			c.walk(ch)
		}
		c.w.block(1)
	case atom.A:
		c.link(n)
	case atom.Sup:
		// 10<sup>23</sup> is 10^23, not 1023; footnote marks ([1]) stay as
		// they are.
		if r := firstRune(n); r != 0 && r != '[' {
			c.w.raw("^")
			c.w.glue = true
		}
		c.children(n)
	case atom.Div, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Nav, atom.Aside,
		atom.Main, atom.Form, atom.Fieldset, atom.Legend, atom.Details, atom.Summary, atom.Dl,
		atom.Dt, atom.Dd, atom.Address, atom.Figcaption, atom.Caption, atom.Center, atom.Hgroup,
		atom.Search, atom.Dialog, atom.Body, atom.Html:
		c.w.block(1)
		c.children(n)
		c.w.block(1)
	default:
		c.children(n)
	}
}

// marker is the marker of a list item: "- ", or "N. " in an ordered list,
// indented by its nesting.
func (c *converter) marker() string {
	if len(c.lists) == 0 {
		return "- "
	}
	indent := strings.Repeat("  ", min(len(c.lists)-1, maxListIndent))
	top := &c.lists[len(c.lists)-1]
	if !top.ordered {
		return indent + "- "
	}
	top.n++
	return indent + strconv.Itoa(top.n) + ". "
}

// link writes a link's text, then its URL in parentheses when links are
// shown.
func (c *converter) link(n *html.Node) {
	start := c.w.b.Len()
	c.children(n)
	if !c.opts.Links || c.w.b.Len() == start {
		return
	}
	href := c.linkURL(attr(n, "href"))
	if href == "" || c.seen[href] {
		return
	}
	if bareURL(c.w.b.String()[start:]) == bareURL(href) {
		return // the text is the URL
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[href] = true
	c.w.raw(" (" + href + ")")
}

// linkURL resolves href against the base URL; it returns "" for links not
// worth showing.
func (c *converter) linkURL(href string) string {
	href = strings.TrimSpace(href)
	if href == "" || href[0] == '#' {
		return ""
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if c.opts.Base != nil {
		u = c.opts.Base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil {
		return ""
	}
	u.Fragment, u.RawFragment = "", ""
	s := u.String()
	if len(s) > maxLinkLength || strings.ContainsAny(s, "\n\r") {
		return ""
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// firstRune returns the first non-space character of n's text, or 0 when
// there is none within its first 64 nodes.
func firstRune(n *html.Node) rune {
	budget := 64
	var find func(n *html.Node) rune
	find = func(n *html.Node) rune {
		for ch := n.FirstChild; ch != nil && budget > 0; ch = ch.NextSibling {
			budget--
			switch {
			case ch.Type == html.TextNode:
				for _, r := range ch.Data {
					if !unicode.IsSpace(r) && !unicode.IsControl(r) {
						return r
					}
				}
			case ch.Type == html.ElementNode && !dropped(ch):
				if r := find(ch); r != 0 {
					return r
				}
			}
		}
		return 0
	}
	return find(n)
}

// bareURL drops white space, the scheme and a trailing slash, to compare
// a link's text with its URL.
func bareURL(s string) string {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "https://"); ok {
		s = rest
	} else if rest, ok := strings.CutPrefix(s, "http://"); ok {
		s = rest
	}
	return strings.TrimSuffix(s, "/")
}

// dropped reports whether an element and its content are left out.
func dropped(n *html.Node) bool {
	switch n.Namespace {
	case "svg":
		return true
	case "":
		switch n.DataAtom {
		case atom.Head, atom.Title, atom.Script, atom.Style, atom.Noscript, atom.Template,
			atom.Iframe, atom.Frameset, atom.Frame, atom.Noframes, atom.Object, atom.Embed,
			atom.Canvas, atom.Audio, atom.Video, atom.Picture, atom.Img, atom.Map, atom.Select,
			atom.Datalist, atom.Button, atom.Textarea, atom.Input, atom.Noembed, atom.Meta,
			atom.Link, atom.Base, atom.Slot:
			return true
		case atom.Dialog:
			if _, open := attrOK(n, "open"); !open {
				return true
			}
		}
	}
	for _, a := range n.Attr {
		switch a.Key {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(strings.TrimSpace(a.Val), "true") {
				return true
			}
		case "style":
			s := strings.ToLower(strings.Join(strings.Fields(a.Val), ""))
			if strings.Contains(s, "display:none") || strings.Contains(s, "visibility:hidden") {
				return true
			}
		}
	}
	return false
}

// findTitle returns the document's first HTML <title> element.
func findTitle(n *html.Node) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == atom.Title && n.Namespace == "" {
		return n
	}
	if n.Type == html.ElementNode && n.Namespace != "" {
		return nil
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if t := findTitle(ch); t != nil {
			return t
		}
	}
	return nil
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// stripTags is the fallback for documents html.Parse refuses: the text
// outside script-like elements, with a line break at each block tag.
func stripTags(w *textWriter, src string) {
	z := html.NewTokenizer(strings.NewReader(src))
	skip := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return
		case html.TextToken:
			if skip == 0 {
				w.text(string(z.Text()))
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch a {
			case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Title,
				atom.Iframe, atom.Textarea, atom.Select, atom.Object, atom.Noembed, atom.Noframes:
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
			case atom.Br:
				w.br()
			case atom.P, atom.Div, atom.Li, atom.Tr, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5,
				atom.H6, atom.Ul, atom.Ol, atom.Table, atom.Section, atom.Article, atom.Header,
				atom.Footer, atom.Nav, atom.Pre, atom.Blockquote, atom.Dt, atom.Dd, atom.Hr:
				w.block(1)
			}
		}
	}
}
