package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// PathSetting is one setting of a pipeline that names a file or a folder:
// what Pipeline.MapPaths visits.
type PathSetting struct {
	// Key is the setting's dotted key, as errors name it: "llm.script",
	// "tools[1].corpus", "nodes[0].prompt_file",
	// "nodes[2].react.examples_file".
	Key string
	// Name is the setting's own key, the last element of Key: "corpus",
	// "prompt_file", "script".
	Name string
	// Value is the path as the pipeline writes it (after ${VAR}
	// expansion), with surrounding space trimmed.
	Value string
	// Path is Value made absolute: a relative Value is taken relative to
	// the pipeline file's folder, as the tools and nodes take it.
	Path string
	// Walked is true for a corpus a tool reads whole when it is built
	// (search's corpus, docstore's source): a folder whose corpus files
	// (.md, .markdown, .txt, .jsonl) are all read, or one such file.
	Walked bool
}

// Path setting keys. A tools entry names a file or folder with one of
// toolPathKeys or a key ending in one of pathSuffixes; a node (at any depth
// of its settings, such as react: or dispatch: mappings) with a key ending
// in one of pathSuffixes; a model with llm.script.
var (
	toolPathKeys = []string{"corpus", "source", "root", "path", "cwd", "dir", "file"}
	pathSuffixes = []string{"_file", "_dir", "_path"}
	// walkedKeys are the tool settings whose corpus is read whole.
	walkedKeys = []string{"corpus", "source"}
	// builtinCorpora are the values of walkedKeys that name an embedded
	// corpus, not a path.
	builtinCorpora = []string{"", "demo"}
)

// isPathKey reports whether a setting named k (lower-case) names a file
// or a folder; tool says whether it is a tools entry's own key.
func isPathKey(k string, tool bool) bool {
	if tool && slices.Contains(toolPathKeys, k) {
		return true
	}
	for _, s := range pathSuffixes {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}

// MapPaths calls fn with every setting of p that names a file or a folder
// and replaces the setting's value with what fn returns (return s.Value to
// keep it). The settings visited are:
//
//   - llm.script, and the script of every node's llm block;
//   - in each tools entry: corpus and source (unless "demo" or empty, the
//     embedded demo corpus), root, path, cwd, dir, file, and every key
//     ending in _file, _dir or _path, at any depth; an mcp entry's command
//     is not a path and is not visited;
//   - in each node, at any depth of its settings: every key ending in
//     _file, _dir or _path (prompt_file, system_file, examples_file,
//     judge_prompt_file, ...).
//
// Empty values are skipped. The first error fn returns stops the walk and
// is returned as a *Error at the setting's line, wrapping ErrInvalid and
// the error. A program that builds a pipeline from an untrusted source
// (the HTTP server's validation) confines these paths with it.
func (p *Pipeline) MapPaths(fn func(s PathSetting) (string, error)) error {
	visit := func(key, name, value string, walked bool) (string, error) {
		v := strings.TrimSpace(value)
		if v == "" || (walked && slices.Contains(builtinCorpora, v)) {
			return value, nil
		}
		abs := v
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(p.Dir(), abs)
		}
		out, err := fn(PathSetting{Key: key, Name: name, Value: v, Path: filepath.Clean(abs), Walked: walked})
		if err != nil {
			return "", p.Errorf(key, err, "%s: %v", key, err)
		}
		return out, nil
	}
	var err error
	if p.LLM.Script, err = visit("llm.script", "script", p.LLM.Script, false); err != nil {
		return err
	}
	for i := range p.Tools {
		t := &p.Tools[i]
		if t.Name == MCPTool {
			continue
		}
		if err := p.mapSettings(fmt.Sprintf("tools[%d]", i), t.Settings, true, false, visit); err != nil {
			return err
		}
	}
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if err := p.mapSettings(fmt.Sprintf("nodes[%d]", i), n.Settings, false, false, visit); err != nil {
			return err
		}
	}
	return nil
}

// mapSettings visits the path settings of one tools entry or node, or of
// a mapping nested in one, recursing into nested mappings and lists.
// toolTop says settings are a tools entry's own (where toolPathKeys
// apply); model says they are an llm block (where script is a path).
func (p *Pipeline) mapSettings(prefix string, settings map[string]any, toolTop, model bool, visit func(key, name, value string, walked bool) (string, error)) error {
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		key := prefix + "." + k
		name := strings.ToLower(k)
		switch v := settings[k].(type) {
		case string:
			if !isPathKey(name, toolTop) && (!model || name != "script") {
				continue
			}
			out, err := visit(key, name, v, toolTop && slices.Contains(walkedKeys, name))
			if err != nil {
				return err
			}
			settings[k] = out
		case map[string]any:
			if err := p.mapSettings(key, v, false, name == "llm", visit); err != nil {
				return err
			}
		case []any:
			for j, e := range v {
				if m, ok := e.(map[string]any); ok {
					if err := p.mapSettings(fmt.Sprintf("%s[%d]", key, j), m, false, false, visit); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}
