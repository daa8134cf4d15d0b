package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 'planner schema' prints the committed docs/pipeline.schema.json: a JSON
// Schema with a definition per node type.
func TestSchemaPrintsTheCommittedSchema(t *testing.T) {
	t.Parallel()
	res := cli(t, "schema")
	require.Equal(t, 0, res.code, res.stderr)
	committed, err := os.ReadFile(filepath.Join(repoRoot, "docs", "pipeline.schema.json"))
	require.NoError(t, err)
	assert.Equal(t, string(committed), res.stdout)
	var doc struct {
		Schema string         `json:"$schema"`
		Defs   map[string]any `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &doc))
	assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", doc.Schema)
	assert.Contains(t, doc.Defs, "node.react")

	res = cli(t, "schema", "configs/react.yaml")
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, "expected no arguments")
}
