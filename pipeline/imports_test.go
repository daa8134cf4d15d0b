package pipeline_test

import (
	gobuild "go/build"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The compiler turns any registry's constructors into a graph; it must not
// depend on the paradigms it compiles (they are composed in the wiring
// layer), or every paradigm would sit below it in the import graph.
func TestPipelineImportsNoParadigmPackage(t *testing.T) {
	pkg, err := gobuild.ImportDir(".", 0)
	require.NoError(t, err)
	const module = "github.com/planner-engine/planner/"
	for _, imp := range pkg.Imports {
		rel, ok := strings.CutPrefix(imp, module)
		if !ok {
			continue
		}
		for _, paradigm := range []string{"nodes", "executor", "planner", "replanner", "eval", "internal"} {
			assert.False(t, rel == paradigm || strings.HasPrefix(rel, paradigm+"/"), "pipeline imports %s", imp)
		}
	}
}
