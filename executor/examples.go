package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/nodekind"
)

// ErrExamples means the few-shot examples could not be read: the file of
// examples_file is missing or unreadable, or it has no string under
// examples_key. Errors from NewLoop wrap it in a *config.SettingError.
var ErrExamples = errors.New("react: cannot read the few-shot examples")

// PaperPromptsURL is where the ReAct paper's few-shot prompt files
// (prompts/prompts_naive.json for HotpotQA, prompts/fever.json for FEVER)
// are published.
const PaperPromptsURL = "https://github.com/ysymyth/ReAct/tree/master/prompts"

// GuardExamplesFallback names the guard event a run emits when its
// examples_file was missing and the built-in examples of
// examples_fallback stand in for it.
const GuardExamplesFallback = "examples_fallback"

// fallbackFiles are the embedded files of the examples_fallback values.
func fallbackFiles() map[string]string {
	return map[string]string{
		ExamplesDemoQA:    "examples_demo_qa.txt",
		ExamplesDemoFEVER: "examples_demo_fever.txt",
	}
}

// FallbackExamples returns the built-in examples named as in
// ReActConfig.ExamplesFallback, exactly as a completion-style prompt
// shows them, and whether the name is known.
func FallbackExamples(name string) (string, bool) {
	f, ok := fallbackFiles()[name]
	if !ok {
		return "", false
	}
	return embedded(f), true
}

// loadExamples reads the examples that cfg sets (inline, from a file, or
// under a key of a JSON file). notice is set when the file was missing and
// the fallback was used: the text of the run's examples_fallback event.
// Empty text means the settings give none (the embedded defaults apply).
func loadExamples(env nodekind.Env, cfg ReActConfig) (text, notice string, err error) {
	fallback := strings.TrimSpace(cfg.ExamplesFallback)
	switch {
	case cfg.ExamplesFile == "" && cfg.ExamplesKey != "":
		return "", "", config.SettingErrorf("examples_key", "examples_key selects a key of examples_file, which is not set")
	case cfg.ExamplesFile == "" && fallback != "":
		return "", "", config.SettingErrorf("examples_fallback", "examples_fallback stands in for a missing examples_file, which is not set")
	case cfg.ExamplesFile == "":
		return cfg.Examples, "", nil
	case cfg.Examples != "":
		return "", "", &config.SettingError{Key: "examples", Err: fmt.Errorf("%w: set the text inline or examples_file, not both", config.ErrSettings)}
	}
	if _, ok := fallbackFiles()[fallback]; fallback != "" && !ok {
		return "", "", config.SettingErrorf("examples_fallback", "want %q or %q, got %q", ExamplesDemoQA, ExamplesDemoFEVER, fallback)
	}
	path := cfg.ExamplesFile
	if !filepath.IsAbs(path) && env.BaseDir != "" {
		path = filepath.Join(env.BaseDir, path)
	}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && fallback != "":
		text, _ := FallbackExamples(fallback)
		notice = fmt.Sprintf("examples_file %s not found: using the built-in %q examples (the ReAct paper's format over the demo corpus, "+
			"NOT the paper's own examples). For the paper's prompts, download %s and point examples_file at it "+
			"(the shipped configs react_hotpotqa and react_fever read it from the folder $PLANNER_REACT_PROMPTS)", path, fallback, paperFile(cfg.ExamplesFile))
		return text, notice, nil
	case errors.Is(err, fs.ErrNotExist):
		return "", "", examplesError("examples_file", fmt.Errorf("%w (%s)%s", err, path, wherePaper(cfg.ExamplesFile)))
	case err != nil:
		return "", "", examplesError("examples_file", err)
	}
	if cfg.ExamplesKey == "" {
		return string(b), "", nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return "", "", examplesError("examples_key", fmt.Errorf("examples_key needs examples_file to be a JSON object, and %s is not: %w", path, err))
	}
	raw, ok := obj[cfg.ExamplesKey]
	if !ok {
		return "", "", examplesError("examples_key", fmt.Errorf("%s has no key %q; its keys: %s", path, cfg.ExamplesKey, strings.Join(slices.Sorted(maps.Keys(obj)), ", ")))
	}
	if err := json.Unmarshal(raw, &text); err != nil {
		return "", "", examplesError("examples_key", fmt.Errorf("the value of %q in %s is not a string: %w", cfg.ExamplesKey, path, err))
	}
	return text, "", nil
}

func examplesError(key string, err error) error {
	return &config.SettingError{Key: key, Err: fmt.Errorf("%w: %w: %w", config.ErrSettings, ErrExamples, err)}
}

// paperFile names the paper's prompt file that file looks like, with
// where it is published.
func paperFile(file string) string {
	switch base := filepath.Base(file); base {
	case "prompts_naive.json", "fever.json":
		return "prompts/" + base + " from " + PaperPromptsURL
	}
	return "the prompt files from " + PaperPromptsURL
}

// wherePaper is the hint a missing file of the paper's name gets.
func wherePaper(file string) string {
	switch filepath.Base(file) {
	case "prompts_naive.json", "fever.json":
		return "; it is one of the ReAct paper's prompt files: download " + paperFile(file) + ", or set examples_fallback"
	}
	return ""
}
