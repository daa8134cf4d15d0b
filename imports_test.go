package planner_test

import (
	gobuild "go/build"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The public package is what outside modules build on: it must not pull in
// the evaluation harness, the offline simulator that lives in it, or the
// command line's internals, even through another package of the module.
func TestPublicPackageDependsOnNoEvalOrInternalPackage(t *testing.T) {
	const module = "github.com/planner-engine/planner"
	seen := map[string]bool{}
	var visit func(rel, from string)
	visit = func(rel, from string) {
		if seen[rel] {
			return
		}
		seen[rel] = true
		for _, banned := range []string{"eval", "internal/app", "internal/temporaltest", "internal/hostile", "cmd"} {
			assert.False(t, rel == banned || strings.HasPrefix(rel, banned+"/"), "the public package depends on %s/%s (imported by %s)", module, rel, from)
		}
		pkg, err := gobuild.ImportDir(filepath.FromSlash(rel), 0)
		require.NoError(t, err, rel)
		for _, imp := range pkg.Imports {
			if sub, ok := strings.CutPrefix(imp, module+"/"); ok {
				visit(sub, pkg.ImportPath)
			}
		}
	}
	visit(".", "")
	assert.Greater(t, len(seen), 10, "the walk followed the module's packages")
}
