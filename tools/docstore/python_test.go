package docstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The expected values below are what CPython 3.12 prints.

func TestPyReprQuotesLikePython(t *testing.T) {
	tests := map[string]string{
		"":                        `''`,
		"Titan":                   `'Titan'`,
		"Halley's Comet":          `"Halley's Comet"`,
		`Say "hi"`:                `'Say "hi"'`,
		`It's "x"`:                `'It\'s "x"'`,
		`back\slash`:              `'back\\slash'`,
		"tab\there":               `'tab\there'`,
		"new\nline":               `'new\nline'`,
		"cr\rx":                   `'cr\rx'`,
		"\x00\x1f\x7f":            `'\x00\x1f\x7f'`,
		"\u0085\u00a0\u00ad":      `'\x85\xa0\xad'`,
		"Ōsaka São Paulo Ηλίας":   `'Ōsaka São Paulo Ηλίας'`,
		"\u200b\u2028\ufeff":      `'\u200b\u2028\ufeff'`,
		"😀 \U000E0001 \U0010FFFF": `'😀 \U000e0001 \U0010ffff'`,
		"\u0378":                  `'\u0378'`,
		"ẞ":                       `'ẞ'`,
		"bad \xff byte":           "'bad \uFFFD byte'",
	}
	for in, want := range tests {
		assert.Equal(t, want, pyRepr(in), "repr of %q", in)
	}
	assert.Equal(t, `['a', "b'c", 'd"e', 'f\'g"h']`, pyListRepr([]string{"a", "b'c", `d"e`, `f'g"h`}))
	assert.Equal(t, "[]", pyListRepr(nil))
}

func TestPyLowerAndStripFollowPython(t *testing.T) {
	assert.Equal(t, "οδος σ aς. i\u0307", pyLower("ΟΔΟΣ Σ AΣ. İ"))
	assert.Equal(t, "σς", pyLower("ΣΣ"))
	assert.Equal(t, "aσb a'ς a'σ'b", pyLower("AΣB A'Σ A'Σ'B"))
	assert.Equal(t, "titan", pyLower("TITAN"))
	assert.Equal(t, "x", pyStrip(" \x1c\x1dx\u3000\x1e\x1f"))
	assert.Equal(t, "a\u200bb", pyStrip("\u00a0a\u200bb\u2029"), "a zero-width space is not white space")
}

func TestWikiQueryReadsTheEntityAsAURL(t *testing.T) {
	tests := map[string]string{
		"Titan":               "Titan",
		"  Titan  ":           "  Titan  ",
		"C++":                 "C  ",
		"Titan#History":       "Titan",
		"AT&T":                "AT",
		"Halley%27s Comet":    "Halley's Comet",
		"100%25":              "100%",
		"50% off":             "50% off",
		"%zz and %27":         "%zz and %27",
		"%e2%80%93":           "–",
		"%ff":                 "\uFFFD",
		"%2B":                 "+",
		"São Paulo":           "São Paulo",
		"trailing %":          "trailing %",
		"%4":                  "%4",
		"Σ%4é":                "Σ%4é",
		"x%é1 %41":            "x%é1 %41",
		"one%41%D9%A1two":     "oneA١two",
		"Adam Clayton Powell": "Adam Clayton Powell",
	}
	for in, want := range tests {
		assert.Equal(t, want, wikiQuery(in), "query of %q", in)
	}
}

func TestTitleKeyAndValidTitleFollowMediaWiki(t *testing.T) {
	keys := map[string]string{
		"titan":               "Titan",
		"  high_plains  (US)": "High plains (US)",
		"a\u00a0 _b":          "A b",
		"\u200eLeft\u200f":    "Left",
		":Talk":               "Talk",
		"ßtraße":              "ßtraße",
		"éclair":              "Éclair",
		"":                    "",
	}
	for in, want := range keys {
		assert.Equal(t, want, titleKey(in), "key of %q", in)
	}
	for _, ok := range []string{"Titan", "C (programming language)", "AC/DC", "50% off", "Halley's Comet"} {
		assert.True(t, validTitle(ok), ok)
	}
	for _, bad := range []string{"", "[Titan]", "A|B", "a{b}", "x<y", "Tab\there", "%41", "./a", "a/../b", "..", "~~~", string(make([]byte, 256))} {
		assert.False(t, validTitle(bad), "%q", bad)
	}
}
