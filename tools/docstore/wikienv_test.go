package docstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/docstore"
)

// wikiFixture is a small corpus in the docstore's JSON Lines format: pages
// whose text is what WikiEnv keeps of a Wikipedia page (one paragraph per
// line), a disambiguation page, and two failed searches recorded with the
// similar titles Wikipedia listed.
const wikiFixture = `{"title": "Titan", "text": "Titan is the largest moon of Saturn. It is the second-largest natural satellite in the Solar System. Titan was discovered on March 25, 1655 by the Dutch astronomer Christiaan Huygens.\nTitan is primarily composed of ice and rocky material. Its atmosphere is mostly nitrogen.\nHuygens probe landed on Titan in 2005. The probe was named after Christiaan Huygens."}
{"title": "Halley's Comet", "text": "Halley's Comet is a short-period comet visible from Earth every 75–79 years. It last appeared in 1986.\nEdmond Halley computed its orbit in 1705."}
{"title": "São Paulo", "text": "São Paulo is the most populous city in Brazil.  Its name honours Saint Paul.\nThe word ΟΔΟΣ is Greek for road. Streets are busy."}

{"title": "Mercury (planet)", "text": "Mercury is the smallest planet in the Solar System. It is the closest planet to the Sun."}
{"title": "Mercury", "text": "Mercury may refer to:\nMercury (planet), the smallest planet\nMercury (element), a chemical element"}
{"title": "Saturn's moon", "similar": ["Titan", "Enceladus", "Rhea", "Iapetus", "Dione", "Tethys", "Mimas"]}
{"title": "[Mercury]", "similar": ["Mercury (planet)", "Mercury (element)", "Freddie Mercury", "Mercury's \"hat\"", "Ōsaka", "Back\\slash"]}
`

// Observations of the fixture's pages, as wikienv.py's get_page_obs builds
// them: the first five sentences, a paragraph's last one ending in "..".
const (
	titanObs = "Titan is the largest moon of Saturn. It is the second-largest natural satellite in the Solar System. " +
		"Titan was discovered on March 25, 1655 by the Dutch astronomer Christiaan Huygens.. Titan is primarily " +
		"composed of ice and rocky material. Its atmosphere is mostly nitrogen.."
	halleyObs  = "Halley's Comet is a short-period comet visible from Earth every 75–79 years. It last appeared in 1986.. Edmond Halley computed its orbit in 1705.."
	mercuryObs = "Mercury is the smallest planet in the Solar System. It is the closest planet to the Sun.."
	saoObs     = "São Paulo is the most populous city in Brazil. Its name honours Saint Paul.. The word ΟΔΟΣ is Greek for road. Streets are busy.."
)

// TestWikiEnvTrajectory plays a trajectory whose every observation was
// produced by wikienv.py itself (its WikiEnv class run against a stub of
// Wikipedia serving the fixture).
func TestWikiEnvTrajectory(t *testing.T) {
	store := jsonlStore(t, wikiFixture, docstore.WithFormat(docstore.FormatWikiEnv))
	runSteps(t, store, []step{
		// Before any search there is no page: the lookup list is empty.
		{"lookup[moon]", "No more results.\n"},
		{"search[Titan]", titanObs},
		// Matching ignores case; the same keyword moves on.
		{"lookup[huygens]", "(Result 1 / 3) Titan was discovered on March 25, 1655 by the Dutch astronomer Christiaan Huygens.."},
		{"lookup[huygens]", "(Result 2 / 3) Huygens probe landed on Titan in 2005."},
		// The keyword is compared exactly: "Huygens" is a new keyword.
		{"lookup[Huygens]", "(Result 1 / 3) Titan was discovered on March 25, 1655 by the Dutch astronomer Christiaan Huygens.."},
		{"lookup[Huygens]", "(Result 2 / 3) Huygens probe landed on Titan in 2005."},
		{"lookup[Huygens]", "(Result 3 / 3) The probe was named after Christiaan Huygens.."},
		{"lookup[Huygens]", "No more results.\n"},
		{"lookup[Huygens]", "No more results.\n"},
		// A failed search lists the recorded titles, five at most, and
		// leaves the page and the lookup cursor alone.
		{"search[Saturn's moon]", "Could not find Saturn's moon. Similar: ['Titan', 'Enceladus', 'Rhea', 'Iapetus', 'Dione']."},
		{"lookup[Huygens]", "No more results.\n"},
		{"lookup[nitrogen]", "(Result 1 / 1) Its atmosphere is mostly nitrogen.."},
		// A disambiguation page is searched again as [Mercury]; Python's
		// repr quotes each title.
		{"search[Mercury]", `Could not find [Mercury]. Similar: ['Mercury (planet)', 'Mercury (element)', 'Freddie Mercury', 'Mercury\'s "hat"', 'Ōsaka'].`},
		{"lookup[nitrogen]", "No more results.\n"},
		// Wikipedia trims the query and ignores the case of its first
		// letter; a successful search resets the lookup.
		{"search[  titan ]", titanObs},
		{"lookup[nitrogen]", "(Result 1 / 1) Its atmosphere is mostly nitrogen.."},
		{"search[Mercury_(planet)]", mercuryObs},
		// White space in a keyword counts.
		{"lookup[ planet]", "(Result 1 / 2) Mercury is the smallest planet in the Solar System."},
		{"lookup[ planet]", "(Result 2 / 2) It is the closest planet to the Sun.."},
		{"lookup[ planet]", "No more results.\n"},
		{"search[Halley's Comet]", halleyObs},
		{"search[São Paulo]", saoObs},
		// Python's lower() maps a word-final capital sigma to ς.
		{"lookup[ΟΔΟΣ]", "(Result 1 / 1) The word ΟΔΟΣ is Greek for road."},
		{"lookup[οδοσ]", "No more results.\n"},
		{"lookup[οδος]", "(Result 1 / 1) The word ΟΔΟΣ is Greek for road."},
		{"lookup[saint paul]", "(Result 1 / 1) Its name honours Saint Paul.."},
		{"lookup[.]", "(Result 1 / 4) São Paulo is the most populous city in Brazil."},
		{"lookup[.]", "(Result 2 / 4) Its name honours Saint Paul.."},
		{"search[Mercury (planet)]", mercuryObs},
		{"lookup[.]", "(Result 1 / 2) Mercury is the smallest planet in the Solar System."},
		// The entity goes into a URL: "#" starts the fragment, "&" ends
		// the parameter, "+" and %XX are decoded.
		{"search[Titan#Atmosphere]", titanObs},
		{"search[Titan&action=edit]", titanObs},
		{"search[Halley%27s Comet]", halleyObs},
		{"search[Halley's+Comet]", halleyObs},
	})
}

func TestWikiEnvFailedSearches(t *testing.T) {
	store := jsonlStore(t, wikiFixture, docstore.WithFormat(docstore.FormatWikiEnv))
	runSteps(t, store, []step{
		// Nothing in the corpus matches: an empty list.
		{"search[xyzzy]", "Could not find xyzzy. Similar: []."},
		// The entity is reported as given, spaces and all.
		{"search[ xyzzy  plugh ]", "Could not find  xyzzy  plugh . Similar: []."},
		// Square brackets make an invalid title: never a page.
		{"search[[Titan]]", "Could not find [Titan]. Similar: ['Titan']."},
		// No recorded list: the index ranks the pages.
		{"search[Galilean moon of Saturn]", "Could not find Galilean moon of Saturn. Similar: ['Titan']."},
		{"search[Sao Paulo city]", "Could not find Sao Paulo city. Similar: ['São Paulo']."},
		{"lookup[Titan]", "No more results.\n"},
	})

	// The accent- and case-insensitive title match.
	runSteps(t, store, []step{{"search[SAO PAULO]", saoObs}, {"search[halley's comet]", halleyObs}})
}

func TestWikiEnvSimilarCountAndRepr(t *testing.T) {
	const corpus = `{"title": "Rock", "text": "Rock is a naturally occurring solid. It is made of minerals."}
{"title": "Rock music", "similar": ["Rock and roll", "Rock 'n' roll", "It's \"rock\"", "Motörhead", "Tab\there", "Ünïcödé ☃", "Zero\u200bwidth", "Seventh"]}
`
	store := jsonlStore(t, corpus, docstore.WithFormat(docstore.FormatWikiEnv), docstore.WithSimilar(7))
	runSteps(t, store, []step{
		{"search[Rock music]", `Could not find Rock music. Similar: ['Rock and roll', "Rock 'n' roll", 'It\'s "rock"', 'Motörhead', 'Tab\there', 'Ünïcödé ☃', 'Zero\u200bwidth'].`},
		{"search[Rock]", "Rock is a naturally occurring solid. It is made of minerals.."},
		// The recorded list of "Rock music" is also that of "[Rock music]".
		{"search[[Rock music]]", `Could not find [Rock music]. Similar: ['Rock and roll', "Rock 'n' roll", 'It\'s "rock"', 'Motörhead', 'Tab\there', 'Ünïcödé ☃', 'Zero\u200bwidth'].`},
	})
}

func TestWikiEnvPageSplitting(t *testing.T) {
	const corpus = `{"title": "Long", "text": "  One. Two.  Three  \n\n\t\nFour. . Five. Six. Seven.\n"}
{"title": "Abbrev", "text": "Dr. Who is a show. It began in 1963 (U.S. release 1965). Its star is W. Hartnell"}
{"title": "Newline", "text": "Line one\r\nLine two\u001c"}
`
	store := jsonlStore(t, corpus, docstore.WithFormat(docstore.FormatWikiEnv))
	runSteps(t, store, []step{
		// Paragraphs are lines; sentences end at ". "; empty pieces go;
		// five sentences are shown.
		{"search[Long]", "One. Two. Three. Four. Five."},
		{"lookup[seven]", "(Result 1 / 1) Seven.."},
		{"lookup[.]", "(Result 1 / 7) One."},
		// ". " splits abbreviations too, and a missing final full stop is
		// added.
		{"search[Abbrev]", "Dr. Who is a show. It began in 1963 (U.S. release 1965). Its star is W."},
		{"lookup[hartnell]", "(Result 1 / 1) Hartnell."},
		// Python's strip() removes "\r" and the information separators.
		{"search[Newline]", "Line one. Line two."},
	})
}

func TestWikiEnvStateIsPerRun(t *testing.T) {
	store := jsonlStore(t, wikiFixture, docstore.WithFormat(docstore.FormatWikiEnv))
	search, lookup := store.SearchTool(), store.LookupTool()
	run1 := tools.WithRunState(context.Background(), tools.NewRunState())
	run2 := tools.WithRunState(context.Background(), tools.NewRunState())
	ctx := context.Background()

	_, err := search.Call(run1, "Titan")
	require.NoError(t, err)
	out, err := lookup.Call(run2, "Huygens")
	require.NoError(t, err)
	assert.Equal(t, docstore.WikiEnvNoMoreResults, out, "run 2 has no page open")
	out, err = lookup.Call(run1, "Huygens")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "(Result 1 / 3) "), out)
	// Without a run state every call starts afresh.
	out, err = lookup.Call(ctx, "Huygens")
	require.NoError(t, err)
	assert.Equal(t, docstore.WikiEnvNoMoreResults, out)
	out, err = lookup.Call(run1, "Huygens")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "(Result 2 / 3) "), out)
}

func TestWikiEnvBlankInputIsRejected(t *testing.T) {
	store := jsonlStore(t, wikiFixture, docstore.WithFormat(docstore.FormatWikiEnv))
	for _, tool := range store.Tools() {
		for _, in := range []string{"", " \t", `{"entity": " "}`} {
			_, err := tool.Call(context.Background(), in)
			assert.ErrorIs(t, err, tools.ErrBadInput, "%s %q", tool.Name(), in)
		}
	}
	// A JSON object is unwrapped, its value kept as given; any other text
	// is the argument exactly as written, quotes included, as the paper's
	// harness passed Search["Love the Way You Lie"].
	runSteps(t, store, []step{
		{"search[" + `{"entity": " Titan"}` + "]", titanObs},
		{"lookup[" + `{"keyword": " planet"}` + "]", "No more results.\n"},
		{"lookup[" + `" moon"` + "]", "No more results.\n"},
		{"lookup[ moon]", "(Result 1 / 1) Titan is the largest moon of Saturn."},
	})
	out, err := store.SearchTool().Call(context.Background(), `"Titan"`)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, `Could not find "Titan".`), "the quotes reach the search: %s", out)
}
