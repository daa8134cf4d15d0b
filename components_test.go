package planner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm/provider"
	"github.com/planner-engine/planner/llm/provider/openai"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/builtin"
	"github.com/planner-engine/planner/tools/search"
	"github.com/planner-engine/planner/tools/toolset"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fullSet registers what the command line registers (package full, which
// imports this package and so cannot be imported by its own tests).
func fullSet() Option {
	opts := []Option{WithProviders(provider.All()...), WithTools(builtin.Factory{}), WithKeywordIndex(search.Keywords{})}
	return func(o *options) {
		for _, opt := range opts {
			opt(o)
		}
	}
}

// writePipeline writes a pipeline file and returns its path.
func writePipeline(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o600))
	return path
}

func TestANewEngineHasOnlyTheOfflineProvidersAndNoTools(t *testing.T) {
	e, err := New()
	require.NoError(t, err)
	defer e.Close()
	assert.Equal(t, []string{"replay", "scripted"}, e.Providers())

	_, err = e.Load(t.Context(), "configs/cot.yaml", WithLLM("openai:gpt-4o-mini"))
	require.ErrorIs(t, err, ErrUnknownProvider)
	assert.ErrorContains(t, err, "planner.WithProviders(openai.Adapter())")
	_, err = e.Load(t.Context(), "configs/cot.yaml", WithLLM("nosuch:m"))
	require.ErrorIs(t, err, ErrUnknownProvider)
	assert.NotContains(t, err.Error(), "WithProviders", "no hint for a provider no adapter has")

	own := writePipeline(t, "name: p\nllm: {provider: anthropic, model: m}\nnodes:\n  - {id: a, type: cot}\nedges:\n  - {from: START, to: a}\n  - {from: a, to: END}\n")
	_, err = e.Load(t.Context(), own)
	require.ErrorIs(t, err, ErrUnknownProvider, "the pipeline's own llm block")
	assert.ErrorContains(t, err, "planner.WithProviders(anthropic.Adapter())")

	_, err = e.Load(t.Context(), "configs/react.yaml", WithLLM("scripted:"+cotScript))
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorIs(t, err, tools.ErrUnknownTool)
	assert.ErrorContains(t, err, "planner.WithTools")
}

func TestAnEngineBuildsOnlyTheProvidersAndToolsItNames(t *testing.T) {
	e, err := New(WithProviders(openai.Adapter()), WithTools(toolset.New(toolset.Calculator())))
	require.NoError(t, err)
	defer e.Close()
	assert.Equal(t, []string{"openai", "replay", "scripted"}, e.Providers())
	assert.Equal(t, "real: openai", e.ModelLabel("openai"))
	t.Setenv("OPENAI_API_KEY", "sk-test")
	path := writePipeline(t, "name: p\ntools: [calculator]\nnodes:\n  - {id: act, type: react}\nedges:\n  - {from: START, to: act}\n  - {from: act, to: END}\n")
	_, err = e.Load(t.Context(), path, WithLLM("openai:gpt-4o-mini"))
	require.NoError(t, err)
	_, err = e.Load(t.Context(), path, WithLLM("anthropic:claude-3-5-haiku-latest"))
	require.ErrorIs(t, err, ErrUnknownProvider)
	_, err = e.Load(t.Context(), "configs/react.yaml", WithLLM("scripted:"+cotScript))
	require.ErrorIs(t, err, tools.ErrUnknownTool, "search is not registered")
	assert.ErrorContains(t, err, "registered tools: calculator")
}

func TestAPipelineThatNeedsAKeywordIndexNamesTheOption(t *testing.T) {
	// compaction summarize adds the recall tool, which searches by words.
	path := writePipeline(t, "name: p\ntools: [calculator]\nnodes:\n  - {id: act, type: react, compaction: summarize}\nedges:\n  - {from: START, to: act}\n  - {from: act, to: END}\n")
	e, err := New(WithTools(toolset.New(toolset.Calculator())))
	require.NoError(t, err)
	defer e.Close()
	_, err = e.Load(t.Context(), path, WithLLM("scripted:"+cotScript))
	require.ErrorIs(t, err, ErrNoKeywordIndex)
	require.ErrorIs(t, err, config.ErrSettings)
	assert.ErrorContains(t, err, "recall")
	assert.ErrorContains(t, err, "planner.WithKeywordIndex")

	with, err := New(WithTools(toolset.New(toolset.Calculator())), WithKeywordIndex(search.Keywords{}))
	require.NoError(t, err)
	defer with.Close()
	_, err = with.Load(t.Context(), path, WithLLM("scripted:"+cotScript))
	require.NoError(t, err)
}

// maxThirdParty is the most packages outside the standard library and the
// module that the root package may compile (issue 27: a light core).
const maxThirdParty = 150

func TestTheRootPackageCompilesOnlyALightCore(t *testing.T) {
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command runs the tests")
	out, err := exec.CommandContext(t.Context(), goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	require.NoError(t, err)
	var third []string
	for _, p := range strings.Fields(string(out)) {
		if !strings.HasPrefix(p, "github.com/planner-engine/planner") {
			third = append(third, p)
		}
	}
	assert.LessOrEqual(t, len(third), maxThirdParty, "third-party packages of the root package")
	for _, p := range third {
		for _, heavy := range []string{"github.com/blevesearch/", "google.golang.org/grpc", "github.com/google/generative-ai-go",
			"go.opentelemetry.io/otel/exporters/", "go.opentelemetry.io/otel/sdk", "github.com/modelcontextprotocol/", "go.starlark.net"} {
			assert.False(t, strings.HasPrefix(p, heavy), "the root package compiles %s; register it by an option instead", p)
		}
	}
}
