package docstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/docstore"
)

// langChainFixture holds pages whose text is laid out as the wikipedia
// package's page content (sections after "\n\n\n== Heading ==\n"), a
// disambiguation page, and recorded failed searches.
const langChainFixture = `{"title": "Titan", "text": "Titan is the largest moon of Saturn.\nIt was discovered by Christiaan Huygens in 1655.\n\n\n== Exploration ==\nThe Huygens probe landed on Titan in 2005.\n\n\n== Atmosphere ==\nTitan's atmosphere is mostly nitrogen. Huygens measured it."}
{"title": "Mercury (planet)", "text": "Mercury is the smallest planet in the Solar System.\n\nThe planet has almost no atmosphere.\n\nIts orbit around the Sun takes 88 days."}
{"title": "Mercury", "text": "Mercury may refer to:\n\nMercury (planet)\n\nMercury (element)"}
{"title": "Saturn's moon", "similar": ["Titan", "Enceladus", "Rhea", "Iapetus", "Dione", "Tethys", "Mimas", "Hyperion", "Phoebe", "Janus", "Epimetheus"]}
{"title": "Mercury", "similar": ["Mercury (planet)", "Mercury (element)", "Freddie Mercury", "Mercury's \"hat\""]}
`

const titanSummary = "Titan is the largest moon of Saturn.\nIt was discovered by Christiaan Huygens in 1655."

// TestLangChainTrajectory plays a trajectory whose observations come from
// DocstoreExplorer's logic run over a stub docstore holding the fixture.
func TestLangChainTrajectory(t *testing.T) {
	store := jsonlStore(t, langChainFixture, docstore.WithFormat(docstore.FormatLangChain))
	ctx := tools.WithRunState(context.Background(), tools.NewRunState())

	// Before any successful search, lookup raises.
	_, err := act(ctx, t, store, "lookup[Huygens]")
	require.ErrorIs(t, err, docstore.ErrNoPage)
	assert.Equal(t, "Cannot lookup without a successful search first", err.Error())

	steps := []step{
		{"search[Titan]", titanSummary},
		// Paragraphs are the pieces between blank lines, kept verbatim;
		// the term is lower-cased, so HUYGENS continues huygens.
		{"lookup[Huygens]", "(Result 1/3) " + titanSummary},
		{"lookup[HUYGENS]", "(Result 2/3) \n== Exploration ==\nThe Huygens probe landed on Titan in 2005."},
		{"lookup[huygens]", "(Result 3/3) \n== Atmosphere ==\nTitan's atmosphere is mostly nitrogen. Huygens measured it."},
		{"lookup[huygens]", "No More Results"},
		{"lookup[huygens]", "No More Results"},
		{"lookup[volcano]", "No Results"},
		{"lookup[volcano]", "No Results"},
		{"lookup[the]", "(Result 1/2) " + titanSummary},
		// A search does not reset the lookup: the same term goes on to
		// its second match, on the new page.
		{"search[Mercury (planet)]", "Mercury is the smallest planet in the Solar System."},
		{"lookup[THE]", "(Result 2/3) The planet has almost no atmosphere."},
		{"lookup[ the]", "(Result 1/2) Mercury is the smallest planet in the Solar System."},
		// A failed search lists the recorded titles, ten at most, with no
		// full stop, and closes the page.
		{"search[Saturn's moon]", "Could not find [Saturn's moon]. Similar: ['Titan', 'Enceladus', 'Rhea', 'Iapetus', 'Dione', 'Tethys', 'Mimas', 'Hyperion', 'Phoebe', 'Janus']"},
	}
	runIn(ctx, t, store, steps)
	_, err = act(ctx, t, store, "lookup[the]")
	require.ErrorIs(t, err, docstore.ErrNoPage)

	runIn(ctx, t, store, []step{
		// A disambiguation page fails.
		{"search[Mercury]", `Could not find [Mercury]. Similar: ['Mercury (planet)', 'Mercury (element)', 'Freddie Mercury', 'Mercury\'s "hat"']`},
		// No title matches: auto-suggest opens the best search result.
		{"search[largest moon of Saturn]", titanSummary},
		{"lookup[ the]", "No More Results"},
		{"search[xyzzy]", "Could not find [xyzzy]. Similar: []"},
		{"search[ titan ]", titanSummary},
	})
}

// runIn plays steps with ctx, checking each observation exactly.
func runIn(ctx context.Context, t *testing.T, store *docstore.Store, steps []step) {
	t.Helper()
	for i, st := range steps {
		got, err := act(ctx, t, store, st.action)
		require.NoError(t, err, "step %d: %s", i+1, st.action)
		assert.Equal(t, st.want, got, "step %d: %s", i+1, st.action)
	}
}

func TestLangChainWithoutAutoSuggest(t *testing.T) {
	store := jsonlStore(t, langChainFixture, docstore.WithFormat(docstore.FormatLangChain), docstore.WithAutoSuggest(false))
	runSteps(t, store, []step{
		{"search[largest moon of Saturn]", "Could not find [largest moon of Saturn]. Similar: ['Titan']"},
		{"search[mercury (PLANET)]", "Mercury is the smallest planet in the Solar System."},
		{"search[Mercury_(planet)]", "Mercury is the smallest planet in the Solar System."},
	})
}

func TestLangChainRecordedFailureWinsOverAutoSuggest(t *testing.T) {
	const corpus = `{"title": "Titan", "text": "Titan is a moon."}
{"title": "moon", "similar": ["Moon", "Titan"]}
`
	store := jsonlStore(t, corpus, docstore.WithFormat(docstore.FormatLangChain), docstore.WithSimilar(1))
	runSteps(t, store, []step{
		{"search[moon]", "Could not find [moon]. Similar: ['Moon']"},
		{"search[a moon]", "Titan is a moon."},
	})
}
