package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"gopkg.in/yaml.v3"
)

// Model is one model of a models file (LoadModels): an llm block, as a
// pipeline's `llm:` takes it, and the label that names it in reports.
type Model struct {
	// Label names the model in reports; empty means its spec
	// ("openai:gpt-4o-mini"). Two models with the same spec (one model
	// at two temperatures) need labels to tell them apart.
	Label string
	// LLM is the model's llm block.
	LLM LLM
}

// IsModelsFile reports whether an --llm value names a models file rather
// than a model spec: a path ending in .yaml or .yml, with no provider
// prefix ("openai:...", "scripted:FILE").
func IsModelsFile(v string) bool {
	return !strings.Contains(v, ":") && (strings.HasSuffix(v, ".yaml") || strings.HasSuffix(v, ".yml"))
}

// LoadModels reads a models file: a YAML document whose `models:` is a
// list of llm blocks, each with the keys of a pipeline's `llm:` block
// (provider, model, temperature, base_url, profile, seed...) and an
// optional `label`:
//
//	models:
//	  - {provider: openai, model: gpt-4o-mini, temperature: 0, label: greedy}
//	  - {provider: openai, model: gpt-4o-mini, temperature: 0.8, label: sampled}
//	  - {provider: sim, profile: noisy}
//
// Keys are checked exactly, and each block as a pipeline's is
// (LLM.Validate). Errors are *Error values naming the file and the line of
// the model at fault, wrapping ErrInvalid. API keys are never written in
// the file: each provider reads its own environment variable (api_key_env
// names another).
func LoadModels(path string) ([]Model, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		msg := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		return nil, &Error{File: path, Msg: "reading the models file: " + msg, Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
	}
	var doc struct {
		Models yaml.Node `yaml:"models"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return nil, &Error{File: path, Line: yamlErrLine(err), Msg: "YAML: " + cleanYAMLErr(err) + " (a models file holds one key, models: a list of llm blocks)",
			Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
	}
	if doc.Models.Kind != yaml.SequenceNode || len(doc.Models.Content) == 0 {
		return nil, &Error{File: path, Line: doc.Models.Line, Key: "models",
			Msg: "models must be a list of llm blocks, such as - {provider: openai, model: gpt-4o-mini}", Err: ErrInvalid}
	}
	out := make([]Model, 0, len(doc.Models.Content))
	labels := map[string]int{}
	for i, item := range doc.Models.Content {
		m, err := decodeModel(item)
		if err != nil {
			return nil, &Error{File: path, Line: item.Line, Key: fmt.Sprintf("models[%d]", i), Msg: err.Error(), Err: fmt.Errorf("%w: %w", ErrInvalid, err)}
		}
		name := m.Label
		if name == "" {
			name = m.LLM.Provider + ":" + m.LLM.Model + m.LLM.Profile
		}
		if prev, dup := labels[name]; dup {
			return nil, &Error{File: path, Line: item.Line, Key: fmt.Sprintf("models[%d]", i),
				Msg: fmt.Sprintf("the same model as models[%d]; give each a distinct label: to tell them apart in reports", prev), Err: ErrInvalid}
		}
		labels[name] = i
		out = append(out, m)
	}
	return out, nil
}

// decodeModel decodes one item of a models file.
func decodeModel(item *yaml.Node) (Model, error) {
	var fields map[string]any
	if item.Kind != yaml.MappingNode {
		return Model{}, errors.New("want an llm block (a mapping such as {provider: openai, model: gpt-4o-mini})")
	}
	if err := item.Decode(&fields); err != nil {
		return Model{}, err
	}
	var m Model
	if l, ok := fields["label"]; ok {
		s, isString := l.(string)
		if !isString || strings.TrimSpace(s) == "" {
			return Model{}, errors.New("label must be a non-empty string")
		}
		m.Label = strings.TrimSpace(s)
		delete(fields, "label")
	}
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{Result: &m.LLM, ErrorUnused: true,
		DecodeHook: mapstructure.StringToTimeDurationHookFunc()})
	if err != nil {
		return Model{}, err
	}
	if err := dec.Decode(fields); err != nil {
		return Model{}, fmt.Errorf("%s (an llm block takes a pipeline's llm: keys, and label)", strings.ReplaceAll(err.Error(), "\n", " "))
	}
	if m.LLM.Provider == "" {
		return Model{}, errors.New("provider is required (openai, anthropic, sim, scripted...)")
	}
	if err := m.LLM.Validate(); err != nil {
		return Model{}, err
	}
	return m, nil
}
