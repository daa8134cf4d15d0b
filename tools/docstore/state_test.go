package docstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/corpus"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/docstore"
	"github.com/planner-engine/planner/tools/search"
)

// demoFormatStore returns a store in format f over the demo corpus, closed
// at cleanup.
func demoFormatStore(t *testing.T, f docstore.Format) *docstore.Store {
	t.Helper()
	c, err := docstore.ReadFS(context.Background(), corpus.Demo())
	require.NoError(t, err)
	s, err := docstore.New(context.Background(), c, docstore.WithFormat(f))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

// endOf reports whether out is a format's last lookup observation.
func endOf(out string) bool {
	return out == docstore.NoMoreResults || out == docstore.WikiEnvNoMoreResults ||
		out == docstore.LangChainNoMoreResults || out == docstore.LangChainNoResults
}

func TestSharedToolsKeepOneStatePerRun(t *testing.T) {
	pages := []string{"Titan", "Neptune", "Voyager 2", "Pluto", "Ganymede", "Christiaan Huygens"}
	const keyword = "the"
	for _, f := range docstore.Formats() {
		t.Run(string(f), func(t *testing.T) {
			store := demoFormatStore(t, f)
			reg, err := tools.NewRegistry(store.Tools())
			require.NoError(t, err)
			// play searches pages[i%len] and then looks keyword up to the
			// end, in the run of ctx.
			play := func(ctx context.Context, i int) ([]string, error) {
				out, err := reg.Call(ctx, docstore.DefaultSearchName, pages[i%len(pages)])
				if err != nil {
					return nil, err
				}
				seq := []string{out}
				for range 100 {
					out, err := reg.Call(ctx, docstore.DefaultLookupName, keyword)
					if err != nil {
						return nil, err
					}
					seq = append(seq, out)
					if endOf(out) {
						break
					}
				}
				return seq, nil
			}
			want := make([][]string, len(pages))
			for i := range pages {
				want[i], err = play(tools.WithRunState(context.Background(), tools.NewRunState()), i)
				require.NoError(t, err)
				require.Greater(t, len(want[i]), 2, "%s has several sentences with %q", pages[i], keyword)
			}
			got := make([][]string, 4*len(pages))
			errs := make([]error, len(got))
			var wg sync.WaitGroup
			for i := range got {
				wg.Go(func() {
					got[i], errs[i] = play(tools.WithRunState(context.Background(), tools.NewRunState()), i)
				})
			}
			wg.Wait()
			for i := range got {
				require.NoError(t, errs[i])
				assert.Equal(t, want[i%len(pages)], got[i], "run %d on %s", i, pages[i%len(pages)])
			}
		})
	}
}

func TestCallsOutsideARunStartAfresh(t *testing.T) {
	ctx := context.Background()
	for _, f := range docstore.Formats() {
		t.Run(string(f), func(t *testing.T) {
			store := demoFormatStore(t, f)
			out, err := store.SearchTool().Call(ctx, "Titan")
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(out, "Titan is the largest moon"), out)
			// The search's page is gone: no run state keeps it.
			out, err = store.LookupTool().Call(ctx, "Huygens")
			switch f {
			case docstore.FormatWikiEnv:
				require.NoError(t, err)
				assert.Equal(t, docstore.WikiEnvNoMoreResults, out)
			case docstore.FormatLangChain:
				assert.ErrorIs(t, err, docstore.ErrNoPage)
			default:
				require.NoError(t, err)
				assert.Equal(t, "No page is open. Call search_page with the name of an entity first, then look up keywords on its page.", out)
			}
		})
	}
}

func TestSessionToolsIgnoreTheRunState(t *testing.T) {
	store := demoFormatStore(t, docstore.FormatWikiEnv)
	sess := store.NewSession()
	ctx := tools.WithRunState(context.Background(), tools.NewRunState())
	_, err := sess.SearchTool().Call(context.Background(), "Titan")
	require.NoError(t, err)
	assert.Equal(t, "Titan", sess.Page())
	out, err := sess.LookupTool().Call(ctx, "Huygens")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "(Result 1 / "), out)
	out, err = store.LookupTool().Call(ctx, "Huygens")
	require.NoError(t, err)
	assert.Equal(t, docstore.WikiEnvNoMoreResults, out, "the run's own state has no page")
}

func TestToolsAreStatefulAndNotReadOnly(t *testing.T) {
	store := demoFormatStore(t, docstore.FormatDefault)
	for _, tool := range append(store.Tools(), store.NewSession().Tools()...) {
		m := tools.MetaOf(tool)
		assert.True(t, m.Stateful, tool.Name())
		assert.False(t, m.ReadOnly, tool.Name())
		assert.False(t, m.Network, tool.Name())
	}
	for _, f := range docstore.Formats() {
		s := demoFormatStore(t, f)
		assert.Equal(t, f, s.Format())
		for _, tool := range s.Tools() {
			assert.NotEmpty(t, tool.Description())
		}
	}
}

func TestFormatsParse(t *testing.T) {
	for in, want := range map[string]docstore.Format{"": docstore.FormatDefault, "default": docstore.FormatDefault, " WikiEnv ": docstore.FormatWikiEnv, "langchain": docstore.FormatLangChain} {
		got, err := docstore.ParseFormat(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := docstore.ParseFormat("react")
	assert.ErrorIs(t, err, docstore.ErrInvalidOption)
	_, err = docstore.New(context.Background(), &docstore.Corpus{}, docstore.WithFormat("react"))
	assert.ErrorIs(t, err, docstore.ErrInvalidOption)
	c := &docstore.Corpus{Pages: []search.Document{{ID: "1", Title: "A", Text: "A is a letter."}}}
	s, err := docstore.New(context.Background(), c, docstore.WithFormat("WikiEnv"))
	require.NoError(t, err)
	assert.Equal(t, docstore.FormatWikiEnv, s.Format())
	require.NoError(t, s.Close())
}
