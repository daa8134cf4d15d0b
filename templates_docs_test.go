package planner_test

import (
	"context"
	"errors"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/calc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the docs' generated table of prompt template fields")

// The docs' generated block sits between these lines, in README.md or in
// one page of docs/.
const (
	docsBegin = "<!-- prompt-fields: begin (generated from the node kinds' declarations: go test . -run TestDocsPromptFields -update) -->\n"
	docsEnd   = "<!-- prompt-fields: end -->\n"
)

// promptFieldsPage returns the path of the one page (README.md or a page
// of docs/) that holds the generated block, and its text.
func promptFieldsPage(t *testing.T) (path, text string) {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	require.NoError(t, err)
	for _, p := range append([]string{"README.md"}, pages...) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		if !strings.Contains(string(b), docsBegin) {
			continue
		}
		require.Empty(t, path, "both %s and %s hold the generated table of prompt template fields", path, p)
		path, text = p, string(b)
	}
	require.NotEmpty(t, path, "neither README.md nor a page of docs/ holds the generated block's begin marker:\n%s", docsBegin)
	return path, text
}

func TestDocsPromptFieldsMatchTheDeclarations(t *testing.T) {
	path, doc := promptFieldsPage(t)
	i, j := strings.Index(doc, docsBegin), strings.Index(doc, docsEnd)
	require.True(t, i >= 0 && j > i, "%s lacks the generated block's end marker after its begin marker", path)
	want := nodekind.TemplateDocs(planner.NodeKinds().Kinds())
	got := doc[i+len(docsBegin) : j]
	if *update && got != want {
		require.NoError(t, os.WriteFile(path, []byte(doc[:i+len(docsBegin)]+want+doc[j:]), 0o644))
		return
	}
	assert.Equal(t, want, got, "%s: the table of prompt template fields is out of date: run go test . -run TestDocsPromptFields -update", path)
}

// Every kind compiles exactly the templates it declares, and a custom
// template that uses every declared .Extra field builds: the declarations
// that validation and the README use are the constructors' own.
func TestKindsCompileTheTemplatesTheyDeclare(t *testing.T) {
	reg, err := tools.NewRegistry([]tools.Tool{calc.New()})
	require.NoError(t, err)
	// The settings a kind cannot do without.
	needs := map[string]map[string]any{
		"subgraph":  {"pipeline": "child.yaml"},
		"map":       {"pipeline": "child.yaml", "over": "var:items"},
		"autopilot": {"candidates": []any{map[string]any{"pipeline": "child.yaml"}}},
	}
	for _, k := range planner.NodeKinds().Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			set := &nodekind.TemplateSet{}
			env := nodekind.Env{Tools: reg, Compiled: set, Subgraphs: noSubgraphs{}}
			_, err := k.New(env, nodekind.Spec{ID: "n", Type: k.Name, Settings: maps.Clone(needs[k.Name])})
			require.NoError(t, err)
			var compiled, declared []string
			for _, tm := range set.Templates() {
				compiled = append(compiled, tm.Setting())
			}
			for _, s := range k.Templates {
				declared = append(declared, s.Key)
			}
			assert.Equal(t, declared, compiled)

			settings := maps.Clone(needs[k.Name])
			if settings == nil {
				settings = map[string]any{}
			}
			for _, s := range k.Templates {
				text := "{{.Question}}"
				for _, f := range s.Extra {
					text += " {{.Extra." + f.Name + "}}"
				}
				block, key := settings, s.Key
				if outer, inner, nested := strings.Cut(s.Key, "."); nested {
					if _, ok := settings[outer]; !ok {
						settings[outer] = map[string]any{}
					}
					block, key = settings[outer].(map[string]any), inner
				}
				block[key] = text
			}
			set = &nodekind.TemplateSet{}
			env.Compiled = set
			_, err = k.New(env, nodekind.Spec{ID: "n", Type: k.Name, Settings: settings})
			require.NoError(t, err)
			for _, tm := range set.Templates() {
				assert.Empty(t, tm.Completed(), "%s uses every field", tm.Setting())
			}
		})
	}
}

// noSubgraphs builds every subgraph as an empty one that is never run.
type noSubgraphs struct{}

func (noSubgraphs) Subgraph(string, string, map[string]any, []string) (nodekind.Subgraph, error) {
	return noSubgraph{}, nil
}

type noSubgraph struct{}

func (noSubgraph) Name() string { return "none" }

func (noSubgraph) RunNested(context.Context, *state.State, state.Task, map[string]string, string) (*state.State, error) {
	return nil, errors.New("not run")
}
