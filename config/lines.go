package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// lineIndex maps dotted key paths ("nodes[2].type") to 1-based lines. Keys
// are lower-cased, as viper reports them.
type lineIndex map[string]int

// maxIndexedNodes bounds the YAML nodes indexLines visits, aliases
// included, so that a small file of nested aliases (a "billion laughs"
// document) cannot make indexing exponential; viper rejects such files
// afterwards.
const maxIndexedNodes = 1 << 16

func indexLines(raw []byte) (lineIndex, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	idx := lineIndex{}
	if len(doc.Content) == 0 {
		return idx, nil
	}
	// An alias is followed to index the keys under it at their anchor's
	// lines, but only once per anchor, never into an anchor being walked
	// (an anchor may contain an alias of itself), and within the budget.
	walked := map[*yaml.Node]bool{}
	budget := maxIndexedNodes
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if budget--; budget < 0 {
			return
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := strings.ToLower(k.Value)
				if path != "" {
					p = path + "." + p
				}
				idx[p] = k.Line
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				idx[p] = c.Line
				walk(c, p)
			}
		case yaml.AliasNode:
			if n.Alias != nil && !walked[n.Alias] {
				walked[n.Alias] = true
				walk(n.Alias, path)
			}
		}
	}
	walk(doc.Content[0], "")
	return idx, nil
}

func (l lineIndex) exact(key string) int { return l[key] }

// find returns the line of key, or of its nearest ancestor present.
func (l lineIndex) find(key string) int {
	key = strings.ToLower(key)
	for key != "" {
		if line, ok := l[key]; ok {
			return line
		}
		cut := strings.LastIndexAny(key, ".[")
		if cut < 0 {
			break
		}
		key = key[:cut]
	}
	// An inline pipeline (Pipeline.Sub) keeps the line of its block under "".
	return l[""]
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func yamlErrLine(err error) int {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		err = errors.New(te.Errors[0])
	}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

func cleanYAMLErr(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}
