package general

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/planner-engine/planner/plan"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"gopkg.in/yaml.v3"
)

// ErrBadSchema means a node's `schema:` is not a JSON Schema the node can
// use: it does not parse, fails the draft's meta-schema, or refers to
// another document.
var ErrBadSchema = errors.New("invalid JSON Schema")

// schema is a compiled JSON Schema and what the node shows the model of it.
type schema struct {
	compiled *jsonschema.Schema
	// text is the schema as indented JSON, for the prompt.
	text string
	// object is true when the schema's top-level "type" is "object".
	object bool
}

// noLoader refuses every document a schema refers to: a node's schema is
// self-contained (its own "$defs" are fine), so that building a pipeline
// never reads a file or the network on a schema's behalf.
type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("%q: a node's schema cannot refer to another document; put the definition under $defs", u)
}

// compileSchema compiles a node's `schema:` setting: a YAML mapping, or
// text holding JSON or YAML (which keeps the case of property names; see
// LLMSettings.Schema). The draft is 2020-12 unless "$schema" names
// another. Errors wrap ErrBadSchema and say what is wrong.
func compileSchema(nodeID string, raw any) (*schema, error) {
	doc, err := schemaDocument(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSchema, err)
	}
	if _, mapping := raw.(map[string]any); mapping {
		restoreKeywords(doc)
		if err := checkLowercased(doc); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadSchema, err)
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSchema, err)
	}
	loaded, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSchema, err)
	}
	loc := "mem:///" + url.PathEscape(nodeID) + "/schema.json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(loc, loaded); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSchema, err)
	}
	compiled, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrBadSchema, schemaProblem(err))
	}
	text, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSchema, err) // unreachable: b was marshalled above
	}
	s := &schema{compiled: compiled, text: string(text)}
	if m, ok := doc.(map[string]any); ok {
		s.object = m["type"] == "object"
	}
	return s, nil
}

// schemaDocument turns the setting into a JSON-ready document: a mapping
// as it is, text parsed as YAML (a superset of JSON). Anything else, or
// text that is not a mapping or boolean, is an error.
func schemaDocument(raw any) (any, error) {
	switch v := raw.(type) {
	case map[string]any:
		return jsonReady(v), nil
	case string:
		var doc any
		if err := yaml.Unmarshal([]byte(v), &doc); err != nil {
			return nil, fmt.Errorf("schema text does not parse as JSON or YAML: %w", err)
		}
		doc = jsonReady(doc)
		switch doc.(type) {
		case map[string]any, bool:
			return doc, nil
		}
		return nil, fmt.Errorf("schema text must hold a mapping (an object), got %T", doc)
	}
	return nil, fmt.Errorf("schema must be a mapping or JSON text, got %T", raw)
}

// jsonReady returns a deep copy of v, a value YAML or the settings
// decoded, that encoding/json can marshal: mappings with non-string keys
// become string-keyed. The copy leaves the node's settings as they are
// when its keywords are restored.
func jsonReady(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonReady(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonReady(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonReady(e)
		}
		return out
	}
	return v
}

// The pipeline loader lower-cases the keys of YAML mappings (not list
// items nor values), so a schema written as a mapping arrives with
// "minlength" for "minLength" and "firstname" for a property "firstName".
// A JSON Schema validator ignores a keyword it does not know, so the
// keywords are restored (restoreKeywords); names cannot be, so a schema
// whose names evidently lost their capitals is an error that says to write
// it as text (checkLowercased).

// camelKeyword returns the JSON Schema keyword (drafts 7 to 2020-12) that
// lower-cases to k, when it has capitals.
func camelKeyword(k string) (string, bool) {
	for _, kw := range [...]string{
		"additionalItems", "additionalProperties", "allOf", "anyOf", "contentEncoding", "contentMediaType",
		"contentSchema", "dependentRequired", "dependentSchemas", "exclusiveMaximum", "exclusiveMinimum",
		"maxContains", "maxItems", "maxLength", "maxProperties", "minContains", "minItems", "minLength",
		"minProperties", "multipleOf", "oneOf", "patternProperties", "prefixItems", "propertyNames", "readOnly",
		"unevaluatedItems", "unevaluatedProperties", "uniqueItems", "writeOnly",
		"$dynamicAnchor", "$dynamicRef", "$recursiveAnchor", "$recursiveRef",
	} {
		if strings.ToLower(kw) == k && kw != k {
			return kw, true
		}
	}
	return "", false
}

// Where a schema keyword's value holds subschemas.
func subschemaKind(keyword string) (one, list, named bool) {
	switch keyword {
	case "additionalItems", "additionalProperties", "contains", "contentSchema", "else", "if", "items", "not",
		"propertyNames", "then", "unevaluatedItems", "unevaluatedProperties":
		return true, keyword == "items", false // items is a list in draft 7
	case "allOf", "anyOf", "oneOf", "prefixItems":
		return false, true, false
	case "$defs", "definitions", "dependencies", "dependentSchemas", "patternProperties", "properties":
		return false, false, true
	}
	return false, false, false
}

// restoreKeywords renames, in schema and every subschema, the keys that
// are lower-cased camel-case keywords back to the keywords.
func restoreKeywords(schema any) {
	m, ok := schema.(map[string]any)
	if !ok {
		return
	}
	for k, v := range m {
		if kw, ok := camelKeyword(k); ok {
			if _, taken := m[kw]; !taken {
				delete(m, k)
				m[kw] = v
			}
		}
	}
	for k, v := range m {
		one, list, named := subschemaKind(k)
		if one {
			restoreKeywords(v)
		}
		if l, ok := v.([]any); ok && list {
			for _, e := range l {
				restoreKeywords(e)
			}
		}
		if sub, ok := v.(map[string]any); ok && named {
			for _, e := range sub {
				restoreKeywords(e)
			}
		}
	}
}

// checkLowercased reports a schema written as a mapping whose names lost
// their capitals: a required property declared only in lower case, or a
// $ref with capitals (into $defs, whose names were lower-cased).
func checkLowercased(schema any) error {
	const fix = "the pipeline loader lower-cases mapping keys, so write a schema with capitals in its names as text (schema: |, then the JSON or YAML)"
	switch x := schema.(type) {
	case []any:
		for _, e := range x {
			if err := checkLowercased(e); err != nil {
				return err
			}
		}
	case map[string]any:
		props, _ := x["properties"].(map[string]any)
		req, _ := x["required"].([]any)
		for _, r := range req {
			name, _ := r.(string)
			if _, ok := props[name]; ok || props == nil {
				continue
			}
			if _, ok := props[strings.ToLower(name)]; ok {
				return fmt.Errorf("required property %q is declared as %q: %s", name, strings.ToLower(name), fix)
			}
		}
		if ref, ok := x["$ref"].(string); ok && ref != strings.ToLower(ref) {
			return fmt.Errorf("$ref %q has capitals, but the names it points to may not: %s", ref, fix)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := checkLowercased(x[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// schemaProblem describes a compile error briefly: a meta-schema failure
// as its leaf problems, anything else as it is.
func schemaProblem(err error) string {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			return strings.Join(leafProblems(ve), "; ")
		}
	}
	return err.Error()
}

// leafProblems lists the innermost problems of a validation error, each
// as "at /path: what" ("at the top level" for the whole value), in a
// stable order, each once.
func leafProblems(ve *jsonschema.ValidationError) []string {
	p := message.NewPrinter(language.English)
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		where := "at the top level"
		if len(e.InstanceLocation) > 0 {
			where = "at /" + strings.Join(e.InstanceLocation, "/")
		}
		out = append(out, where+": "+e.ErrorKind.LocalizedString(p))
	}
	walk(ve)
	slices.Sort(out)
	return slices.Compact(out)
}

// reply is a JSON value taken from a model's reply and checked against a
// schema.
type reply struct {
	// value is the decoded value (numbers as json.Number).
	value any
	// canonical is the value as compact JSON with sorted keys.
	canonical string
}

// check extracts the JSON value of text that s accepts: the whole text
// when it is JSON, else each value plan.FindJSON finds (fenced, then
// embedded in prose), most likely first. When none passes, it returns the
// problems of the most likely candidate instead (never none).
func (s *schema) check(text string) (reply, []string) {
	var candidates []string
	if t := strings.TrimSpace(text); json.Valid([]byte(t)) {
		candidates = append(candidates, t)
	}
	for _, raw := range plan.FindJSON(text) {
		if c := string(raw); !slices.Contains(candidates, c) {
			candidates = append(candidates, c)
		}
	}
	var first []string
	for _, c := range candidates {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(c))
		if err == nil {
			err = s.compiled.Validate(v)
		}
		if err == nil {
			if canon, err := canonicalJSON(v); err == nil {
				return reply{value: v, canonical: canon}, nil
			}
		}
		if first == nil {
			var ve *jsonschema.ValidationError
			if errors.As(err, &ve) {
				first = leafProblems(ve)
			} else if err != nil {
				first = []string{err.Error()}
			}
		}
	}
	if first == nil {
		first = []string{"the reply holds no JSON value"}
	}
	return reply{}, first
}

// canonicalJSON writes v compactly, object keys sorted, without escaping
// HTML characters.
func canonicalJSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimRight(b.String(), "\n"), nil
}
