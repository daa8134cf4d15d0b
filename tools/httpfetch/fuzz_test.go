package httpfetch_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/planner-engine/planner/tools/httpfetch"
)

// scriptPrefix leads every fuzzed document: its script and style contents
// are the only 'z' characters of a document without 'z' and without
// character references, so a 'z' in the text is leaked script.
const scriptPrefix = "<script>zzz('leak')</script><style>zzz{}</style>"

func FuzzHTMLToText(f *testing.F) {
	for _, seed := range []string{
		"",
		"plain text",
		"<html><head><title>T</title></head><body><p>Hello <b>world</b></p></body></html>",
		"<ul><li>a<li>b<ol><li>c</ol></ul>",
		"<table><tr><td>a<td>b</table><pre>  x\n y</pre>",
		`<a href="https://example.com/ä">link</a><a href="/rel">rel</a>`,
		"<script>unterminated",
		"</script><p>after",
		"<svg><script>s</script><foreignObject><p>fo</p></foreignObject></svg>",
		"<noscript><p>ns</p></noscript><template><p>t</p></template>",
		"<plaintext><script>",
		"<textarea><script></textarea>",
		"<!-- <script> -->x",
		"<a href=x><p>one<p>two<p>three",
		"<h1>a<h2>b<h6>c",
		"\xff\xfe<p>\x00\x01bad\xc3</p>",
		"&amp;&lt;&#0;&#xD800;&NotEqualTilde;&bogus;",
		strings.Repeat("<ul><li>", 40) + "x",
		`<div hidden><p>h</p></div><p style="display:none">n</p>`,
		"<math><mi>x</mi><annotation-xml encoding=text/html><p>m</p></annotation-xml></math>",
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, src string, links bool) {
		doc := scriptPrefix + src
		check(t, src, httpfetch.HTMLToText(doc, httpfetch.TextOptions{Links: links}))
		// The fallback for documents too deep to parse; the unit tests
		// reach it through HTMLToText.
		check(t, src, httpfetch.StripTags(doc))
	})
}

// check asserts the properties of the text of scriptPrefix+src.
func check(t *testing.T, src, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("output is not valid UTF-8: %q", out)
	}
	if limit := 4*len(src) + 64; len(out) > limit {
		t.Fatalf("output of %d bytes for %d bytes of input (limit %d)", len(out), len(src), limit)
	}
	if !strings.ContainsAny(src, "zZ") && !strings.Contains(src, "&#") && strings.Contains(out, "z") {
		t.Fatalf("script or style content leaked: %q", out)
	}
	if strings.HasPrefix(out, "\n") || strings.HasSuffix(out, "\n") {
		t.Fatalf("output starts or ends with a line break: %q", out)
	}
}
