package paradigms_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planner-engine/planner/nodekind"
	"github.com/planner-engine/planner/paradigms"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/calc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the README's generated table of prompt template fields")

// The README's generated block sits between these lines.
const (
	docsBegin = "<!-- prompt-fields: begin (generated from the node kinds' declarations: go test ./paradigms -run TestREADME -update) -->\n"
	docsEnd   = "<!-- prompt-fields: end -->\n"
)

func TestREADMEPromptFieldsMatchTheDeclarations(t *testing.T) {
	path := filepath.Join("..", "README.md")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	readme := string(b)
	i, j := strings.Index(readme, docsBegin), strings.Index(readme, docsEnd)
	require.True(t, i >= 0 && j > i, "README.md lacks the generated block's marker lines")
	want := nodekind.TemplateDocs(paradigms.Default().Kinds())
	got := readme[i+len(docsBegin) : j]
	if *update && got != want {
		require.NoError(t, os.WriteFile(path, []byte(readme[:i+len(docsBegin)]+want+readme[j:]), 0o644))
		return
	}
	assert.Equal(t, want, got, "the README's table of prompt template fields is out of date: run go test ./paradigms -run TestREADME -update")
}

// Every kind compiles exactly the templates it declares, and a custom
// template that uses every declared .Extra field builds: the declarations
// that validation and the README use are the constructors' own.
func TestKindsCompileTheTemplatesTheyDeclare(t *testing.T) {
	reg, err := tools.NewRegistry([]tools.Tool{calc.New()})
	require.NoError(t, err)
	for _, k := range paradigms.Default().Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			set := &nodekind.TemplateSet{}
			_, err := k.New(nodekind.Env{Tools: reg, Compiled: set}, nodekind.Spec{ID: "n", Type: k.Name})
			require.NoError(t, err)
			var compiled, declared []string
			for _, tm := range set.Templates() {
				compiled = append(compiled, tm.Setting())
			}
			for _, s := range k.Templates {
				declared = append(declared, s.Key)
			}
			assert.Equal(t, declared, compiled)

			settings := map[string]any{}
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
			_, err = k.New(nodekind.Env{Tools: reg, Compiled: set}, nodekind.Spec{ID: "n", Type: k.Name, Settings: settings})
			require.NoError(t, err)
			for _, tm := range set.Templates() {
				assert.Empty(t, tm.Completed(), "%s uses every field", tm.Setting())
			}
		})
	}
}
