package server

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The cache key of a config covers the pipeline files it runs as
// subgraphs or maps: editing one changes the key.
func TestConfigSumCoversNestedPipelineFiles(t *testing.T) {
	dir := t.TempDir()
	parent := filepath.Join(dir, "parent.yaml")
	child := filepath.Join(dir, "child.yaml")
	grandchild := filepath.Join(dir, "grandchild.yaml")
	raw := []byte("name: p\nnodes:\n  - {id: s, type: subgraph, pipeline: child.yaml}\nedges:\n  - {from: START, to: s}\n  - {from: s, to: END}\n")
	require.NoError(t, os.WriteFile(parent, raw, 0o600))
	require.NoError(t, os.WriteFile(child, []byte("name: c\nnodes:\n  - id: m\n    type: map\n    over: var:x\n    pipeline: grandchild.yaml\nedges:\n  - {from: START, to: m}\n  - {from: m, to: END}\n"), 0o600))
	require.NoError(t, os.WriteFile(grandchild, []byte("name: g\nnodes: [{id: a, type: direct}]\nedges: [{from: START, to: a}, {from: a, to: END}]\n"), 0o600))
	var m nestedMemo
	before := m.sum(parent, raw)
	assert.Equal(t, before, m.sum(parent, raw), "stable")
	require.NoError(t, os.WriteFile(grandchild, []byte("name: g\nnodes: [{id: b, type: direct}]\nedges: [{from: START, to: b}, {from: b, to: END}]\n"), 0o600))
	assert.NotEqual(t, before, m.sum(parent, raw), "a nested file two levels down changed")
	assert.Len(t, m.files, 2, "each config's nested files were parsed once, and remembered")

	plain := []byte("name: q\nnodes: [{id: a, type: direct}]\nedges: [{from: START, to: a}, {from: a, to: END}]\n")
	assert.Equal(t, m.sum(parent, plain), m.sum(child, plain), "a config without nested files: its content alone")
}
