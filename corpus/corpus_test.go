package corpus_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/corpus"
	"github.com/planner-engine/planner/tools/search"
)

func TestDemoCorpusPagesAreWellFormed(t *testing.T) {
	docs, err := search.FromFS(corpus.Demo()).Documents(context.Background())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(docs), 40)
	titles := map[string]string{}
	for _, d := range docs {
		t.Run(d.ID, func(t *testing.T) {
			data, err := fs.ReadFile(corpus.Demo(), d.ID)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(data), "# "+d.Title+"\n"), "first line must be the # Title heading")
			assert.NotEmpty(t, strings.TrimSpace(d.Text), "the page has text under its heading")
			assert.LessOrEqual(t, len(strings.Split(d.Text, "\n\n")), 3)
			assert.NotRegexp(t, `\d,\d{3}`, d.Text, "numbers are written without thousands separators")
			prev, dup := titles[d.Title]
			assert.False(t, dup, "title %q also used by %s", d.Title, prev)
			titles[d.Title] = d.ID
		})
	}
}

func TestDemoSuiteIsCopiedOnEachCall(t *testing.T) {
	a := corpus.DemoSuite()
	require.NotEmpty(t, a)
	a[0] = 'x'
	assert.NotEqual(t, a[0], corpus.DemoSuite()[0])
}
