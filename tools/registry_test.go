package tools_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/planner-engine/planner/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type fake struct {
	name string
	fn   func(ctx context.Context, in string) (string, error)
	meta tools.Meta
}

func (f fake) Name() string                                        { return f.name }
func (f fake) Description() string                                 { return "fake " + f.name }
func (f fake) Call(ctx context.Context, in string) (string, error) { return f.fn(ctx, in) }
func (f fake) Meta() tools.Meta                                    { return f.meta }

func echo(name string) fake {
	return fake{name: name, fn: func(_ context.Context, in string) (string, error) { return name + ":" + in, nil }}
}

func TestRegistryResolvesNamesTolerantly(t *testing.T) {
	reg, err := tools.NewRegistry([]tools.Tool{echo("web_search"), echo("calculator")})
	require.NoError(t, err)
	for _, n := range []string{"web_search", "Web-Search", "WEB SEARCH", "websearch", "Calculator"} {
		_, ok := reg.Resolve(n)
		assert.True(t, ok, n)
	}
	_, err = reg.Call(context.Background(), "wolfram", "x")
	require.ErrorIs(t, err, tools.ErrUnknownTool)
	assert.Contains(t, err.Error(), "calculator, web_search")
}

func TestRegistryRejectsNamesThatCollide(t *testing.T) {
	_, err := tools.NewRegistry([]tools.Tool{echo("web_search"), echo("Web-Search")})
	assert.Error(t, err)
}

func TestRegistryTurnsPanicsAndTimeoutsIntoErrors(t *testing.T) {
	panicky := fake{name: "boom", fn: func(context.Context, string) (string, error) { panic("index out of range") }}
	stuck := fake{name: "stuck", meta: tools.Meta{Timeout: 20 * time.Millisecond}, fn: func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}}
	deaf := fake{name: "deaf", meta: tools.Meta{Timeout: 20 * time.Millisecond}, fn: func(context.Context, string) (string, error) {
		time.Sleep(300 * time.Millisecond) // ignores its context
		return "late", nil
	}}
	reg, err := tools.NewRegistry([]tools.Tool{panicky, stuck, deaf})
	require.NoError(t, err)

	_, err = reg.Call(context.Background(), "boom", "")
	require.ErrorIs(t, err, tools.ErrToolPanic)
	assert.Contains(t, err.Error(), "index out of range")

	_, err = reg.Call(context.Background(), "stuck", "")
	require.ErrorIs(t, err, tools.ErrToolTimeout)

	began := time.Now()
	_, err = reg.Call(context.Background(), "deaf", "")
	require.ErrorIs(t, err, tools.ErrToolTimeout)
	assert.Less(t, time.Since(began), 250*time.Millisecond, "a tool ignoring its context must not block the caller")
}

func TestRegistryCancellationIsNotATimeout(t *testing.T) {
	stuck := fake{name: "stuck", fn: func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}}
	reg, err := tools.NewRegistry([]tools.Tool{stuck})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = reg.Call(ctx, "stuck", "")
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, errors.Is(err, tools.ErrToolTimeout))
}

func TestSubsetAndInfos(t *testing.T) {
	reg, err := tools.NewRegistry([]tools.Tool{echo("a_tool"), echo("b")})
	require.NoError(t, err)
	sub, err := reg.Subset([]string{"A-Tool"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a_tool"}, sub.Names())
	_, err = reg.Subset([]string{"zzz"})
	require.ErrorIs(t, err, tools.ErrUnknownTool)
	infos := reg.Infos()
	require.Len(t, infos, 2)
	assert.Equal(t, "object", infos[0].Schema["type"])
}

// described is a tool with a description of its own, as langchaingo's
// tools write them.
type described struct {
	fake
	desc string
}

func (d described) Description() string { return d.desc }

func TestCleanDescriptionTidiesLangchaingoDescriptions(t *testing.T) {
	tests := []struct{ in, want string }{
		// langchaingo's DuckDuckGo tool: quoted, tab-indented lines.
		{"\n\t\"A wrapper around DuckDuckGo Search.\"\n\t\"Free search alternative to google and serpapi.\"\n\t\"Input should be a search query.\"",
			"A wrapper around DuckDuckGo Search. Free search alternative to google and serpapi. Input should be a search query."},
		// langchaingo's Wikipedia tool: indented lines with trailing spaces.
		{"\n\tA wrapper around Wikipedia. \n\tUseful for when you need to answer general questions about \n\tpeople, places. \n\tInput should be a search query.",
			"A wrapper around Wikipedia. Useful for when you need to answer general questions about people, places. Input should be a search query."},
		// Quotes inside a line are kept, even at both of its ends.
		{`"Berlin" or "Paris, France".`, `"Berlin" or "Paris, France".`},
		{`"Berlin" or "Paris"`, `"Berlin" or "Paris"`},
		{"Already clean.", "Already clean."},
		{`""`, ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tools.CleanDescription(tt.in), "%q", tt.in)
	}
	reg, err := tools.NewRegistry([]tools.Tool{described{fake: echo("web_search"), desc: tests[0].in}})
	require.NoError(t, err)
	assert.Equal(t, tests[0].want, reg.Infos()[0].Description)
}
