package httpfetch_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/planner-engine/planner/tools/httpfetch"
	"github.com/stretchr/testify/assert"
)

func TestHTMLToText(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"plain text", "hello   world", "hello world"},
		{"title first", "<title> A  title </title><body><p>Body</p></body>", "A title\n\nBody"},
		{"first title only", "<title>One</title><body><title>Two</title>x", "One\n\nx"},
		{"svg title is not the title", "<svg><title>Icon</title></svg><p>x</p>", "x"},
		{"entities", "<p>Fish &amp; chips &lt;3 &eacute;t&eacute; &#x1F600; &nbsp;end</p>", "Fish & chips <3 été 😀 end"},
		{"paragraphs and breaks", "<p>one</p><p>two<br>three<br><br><br>four</p>", "one\n\ntwo\nthree\n\nfour"},
		{"divs", "<div>a</div><div><div>b</div></div>c", "a\nb\nc"},
		{"inline elements do not break", "a<b>b</b><i>c</i> <span>d</span>", "abc d"},
		{"headings", "<h1>Main</h1><p>text</p><h3>Sub  head</h3>more", "# Main\n\ntext\n\n### Sub head\n\nmore"},
		{"lists", "<ul><li>one</li><li> two </li><li></li><li>\n</li></ul>", "- one\n- two"},
		{"ordered and nested", "<ol><li>first<ul><li>inner</li></ul></li><li>second</li></ol>", "1. first\n  - inner\n2. second"},
		{"deep nesting is capped", "<ul><li>1<ul><li>2<ul><li>3<ul><li>4<ul><li>5</li></ul></li></ul></li></ul></li></ul></li></ul>", "- 1\n  - 2\n    - 3\n      - 4\n      - 5"},
		{"table", "<table><tr><th>Name</th><th>Moons</th></tr><tr><td>Mars</td><td>2</td></tr><tr><td></td><td>x</td></tr></table>after", "Name | Moons\nMars | 2\nx\n\nafter"},
		{"pre keeps space", "<p>a</p><pre>  x = 1\n\n\n  y = 2</pre><p>b</p>", "a\n\n  x = 1\n\n  y = 2\n\nb"},
		{"dropped elements", "<head><style>s{}</style><script>S</script></head><body><script>x()</script><noscript>N</noscript><template>T</template><iframe src=x>I</iframe><svg><text>V</text></svg><select><option>O</option></select><button>B</button><textarea>TA</textarea>ok</body>", "ok"},
		{"hidden elements", `<div hidden>h</div><p aria-hidden="true">a</p><span style="display: none">d</span><span style="visibility:hidden">v</span><dialog>dlg</dialog><dialog open>open</dialog>shown`, "open\nshown"},
		{"comments and doctype", "<!DOCTYPE html><!-- secret --><p>x</p>", "x"},
		{"control characters", "a\x01b\x7fc\u200bd", "abc\u200bd"},
		{"invalid utf-8", "a\xffb", "a\uFFFDb"},
		{"links without Links", `<a href="https://example.com/x">Example</a>`, "Example"},
		{"math keeps text", "<math><mi>x</mi><mo>+</mo><mn>1</mn></math>", "x+1"},
		{"unclosed script", "<p>x</p><script>never closed", "x"},
		{"superscripts", "<p>6.4×10<sup>23</sup> kg, x<sup> 2</sup>, note<sup>[1]</sup>, H<sub>2</sub>O<sup></sup></p>", "6.4×10^23 kg, x^2, note[1], H2O"},
		{"plaintext", "<plaintext><b>raw</b>", "<b>raw</b>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, httpfetch.HTMLToText(tc.in, httpfetch.TextOptions{}))
		})
	}
}

func TestHTMLToTextLinks(t *testing.T) {
	base, _ := url.Parse("https://example.org/docs/page?x=1")
	in := `<p><a href="intro">Intro</a>, <a href="/about#team">About</a>, <a href="#top">Top</a>,
<a href="https://example.org/docs/intro">Intro again</a>, <a href="mailto:a@b.c">Mail</a>,
<a href="javascript:alert(1)">JS</a>, <a href="https://example.com/">example.com</a>, <a href="https://u:p@example.com/">Creds</a>,
<a href="https://example.net/` + strings.Repeat("x", 400) + `">Long</a>, <a href="/empty"></a>, <a href="/img"><img src=x alt=pic></a></p>`
	got := httpfetch.HTMLToText(in, httpfetch.TextOptions{Links: true, Base: base})
	assert.Equal(t, "Intro (https://example.org/docs/intro), About (https://example.org/about), Top, Intro again, Mail, JS, example.com, Creds, Long, ,", got)

	got = httpfetch.HTMLToText(`<a href="rel">Relative</a> <a href="http://x.example/a b">Abs</a>`, httpfetch.TextOptions{Links: true})
	assert.Equal(t, "Relative Abs (http://x.example/a%20b)", got)
}

func TestHTMLToTextOfTooDeepDocuments(t *testing.T) {
	in := "<title>T</title><script>zz()</script>" + strings.Repeat("<div>", 600) + "deep <b>text</b><p>para" + strings.Repeat("</div>", 600) + "<style>zz{}</style>end"
	got := httpfetch.HTMLToText(in, httpfetch.TextOptions{})
	assert.NotContains(t, got, "zz")
	assert.Contains(t, got, "deep text\npara")
	assert.True(t, strings.HasSuffix(got, "\nend"), got)
}
