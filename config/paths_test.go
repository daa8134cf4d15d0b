package config_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/planner-engine/planner/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const pathsYAML = `name: paths
llm: {provider: scripted, script: replies.yaml}
tools:
  - calculator
  - {name: search, corpus: demo}
  - {name: search2, corpus: docs}
  - {name: docstore, source: /data/pages.jsonl}
  - {name: files, root: ., write: false}
  - {name: sql, path: db.sqlite}
  - mcp: {command: [server], cwd: /anywhere}
nodes:
  - id: act
    type: react
    prompt_file: prompts/act.txt
    examples_file: ex.json
    prompt: "not a path"
    react: {system_file: sys.txt}
    llm: {provider: scripted, script: node.yaml}
edges:
  - {from: START, to: act}
  - {from: act, to: END}
`

// MapPaths visits every setting that names a file or a folder, with the
// path made absolute against the pipeline's folder, and replaces it.
func TestMapPathsVisitsEveryPathSetting(t *testing.T) {
	p, err := config.Parse("/cfg/p.yaml", []byte(pathsYAML), env(nil))
	require.NoError(t, err)
	seen := map[string]config.PathSetting{}
	require.NoError(t, p.MapPaths(func(s config.PathSetting) (string, error) {
		seen[s.Key] = s
		return "/new/" + s.Name, nil
	}))
	keys := []string{}
	for k := range seen {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"llm.script", "tools[2].corpus", "tools[3].source", "tools[4].root", "tools[5].path",
		"nodes[0].prompt_file", "nodes[0].examples_file", "nodes[0].react.system_file", "nodes[0].llm.script"}, keys,
		"demo corpora, inline prompts and the mcp entry are not paths")
	assert.Equal(t, config.PathSetting{Key: "tools[2].corpus", Name: "corpus", Value: "docs", Path: filepath.FromSlash("/cfg/docs"), Walked: true}, seen["tools[2].corpus"])
	assert.Equal(t, filepath.FromSlash("/data/pages.jsonl"), seen["tools[3].source"].Path)
	assert.Equal(t, filepath.FromSlash("/cfg"), seen["tools[4].root"].Path)
	assert.False(t, seen["tools[4].root"].Walked)
	assert.Equal(t, filepath.FromSlash("/cfg/prompts/act.txt"), seen["nodes[0].prompt_file"].Path)
	assert.Equal(t, "/new/script", p.LLM.Script)
	assert.Equal(t, "/new/corpus", p.Tools[2].Settings["corpus"])
	assert.Equal(t, "/new/system_file", p.Nodes[0].Settings["react"].(map[string]any)["system_file"])
	assert.Equal(t, "/new/script", p.Nodes[0].Settings["llm"].(map[string]any)["script"])
	assert.Equal(t, "not a path", p.Nodes[0].Settings["prompt"])
}

// A refused path is an error at the setting's line.
func TestMapPathsErrorNamesTheLine(t *testing.T) {
	p, err := config.Parse("p.yaml", []byte(pathsYAML), env(nil))
	require.NoError(t, err)
	cause := errors.New("refused")
	err = p.MapPaths(func(s config.PathSetting) (string, error) {
		if s.Name == "path" {
			return "", cause
		}
		return s.Value, nil
	})
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 9, ce.Line)
	assert.Equal(t, "tools[5].path", ce.Key)
	assert.ErrorIs(t, err, config.ErrInvalid)
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, "p.yaml:9: tools[5].path: refused", err.Error())
}

// ParseAllowed expands only the allowed variables; another counts as
// unset, and one without a default is an error that says it is not
// allowed, without its value.
func TestParseAllowedExpandsOnlyAllowedVariables(t *testing.T) {
	vars := env(map[string]string{"SECRET_URL": "postgres://u:pw@h/db", "PUBLIC_MODEL": "m1", "MODEL": "m2"})
	allow := config.EnvAllowList{"PUBLIC_*", "MODEL"}
	p, err := config.ParseAllowed("p.yaml", []byte("name: ${PUBLIC_MODEL}-${MODEL}-${SECRET_URL:-none}\nnodes: [{id: a, type: direct}]\n"), allow, vars)
	require.NoError(t, err)
	assert.Equal(t, "m1-m2-none", p.Name)

	_, err = config.ParseAllowed("p.yaml", []byte("name: x\ndescription: ${SECRET_URL}\nnodes: [{id: a, type: direct}]\n"), allow, vars)
	var ce *config.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 2, ce.Line)
	assert.Contains(t, err.Error(), "SECRET_URL is not one this pipeline may read")
	assert.NotContains(t, err.Error(), "pw@")

	_, err = config.ParseAllowed("p.yaml", []byte("name: ${PUBLIC_UNSET}\nnodes: [{id: a, type: direct}]\n"), allow, vars)
	assert.ErrorContains(t, err, "PUBLIC_UNSET is not set", "an allowed variable that is unset says so")
}

func TestEnvAllowList(t *testing.T) {
	a := config.EnvAllowList{"EXACT", "PRE_*"}
	assert.True(t, a.Allows("EXACT"))
	assert.False(t, a.Allows("EXACTLY"))
	assert.True(t, a.Allows("PRE_X"))
	assert.True(t, a.Allows("PRE_"))
	assert.False(t, a.Allows("PR"))
	assert.False(t, config.EnvAllowList(nil).Allows("HOME"))
	require.NoError(t, a.Check())
	for _, bad := range []string{"*", "", "1X", "A B", "A*B*", "A-B"} {
		assert.ErrorIs(t, config.EnvAllowList{bad}.Check(), config.ErrInvalid, bad)
	}
}
