package server

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The OpenAPI document describes exactly the registered routes, each
// operation has a unique id, and every $ref resolves.
func TestOpenAPIMatchesTheRoutes(t *testing.T) {
	doc := openAPIDoc()
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	var d struct {
		OpenAPI    string                                `json:"openapi"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(b, &d))
	assert.Equal(t, "3.1.0", d.OpenAPI)

	s := &Server{}
	var routes, documented []string
	for _, rt := range s.routes() {
		routes = append(routes, rt.method+" "+rt.pattern)
	}
	ids := map[string]bool{}
	for path, ops := range d.Paths {
		for method, raw := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
			var op struct {
				OperationID string                     `json:"operationId"`
				Responses   map[string]json.RawMessage `json:"responses"`
			}
			require.NoError(t, json.Unmarshal(raw, &op))
			assert.NotEmpty(t, op.OperationID, "%s %s", method, path)
			assert.False(t, ids[op.OperationID], "operationId %s twice", op.OperationID)
			ids[op.OperationID] = true
			assert.NotEmpty(t, op.Responses)
		}
	}
	slices.Sort(routes)
	slices.Sort(documented)
	assert.Equal(t, routes, documented, "every route is documented, and only those")

	for _, m := range regexpRefs(string(b)) {
		assert.Contains(t, d.Components.Schemas, m, "$ref %s resolves", m)
	}
}

// regexpRefs returns the schema names of the document's $refs.
func regexpRefs(doc string) []string {
	var out []string
	const prefix = `"$ref":"#/components/schemas/`
	for {
		i := strings.Index(doc, prefix)
		if i < 0 {
			return out
		}
		doc = doc[i+len(prefix):]
		out = append(out, doc[:strings.IndexByte(doc, '"')])
	}
}
