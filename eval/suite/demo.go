package suite

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/planner-engine/planner/corpus"
)

// Demo decodes the built-in demo suite (corpus.DemoSuite): questions over
// the demo corpus, each with its reference answer and a gold program of
// "search" and "calculator" steps. Unlike a JSONL file given to Load, it
// rejects unknown fields, so a typo in the embedded suite fails loudly;
// errors wrap ErrBadRecord and name the line. Every gold program is
// checked as Load checks them.
func Demo() ([]Task, error) {
	return decodeStrict("demo suite", corpus.DemoSuite())
}

// Mixed decodes the built-in mixed suite (corpus.MixedSuite), strictly as
// Demo does: tasks of every type of GoldTypes (knowledge questions without
// steps, lookups and multi-hop questions over the demo corpus, arithmetic
// word problems of calculator steps, Game of 24 puzzles whose gold answer
// is one solving expression), for comparing paradigms on the sim model's
// capability profiles. Its tasks are judged by exact match like the demo
// suite's, so a puzzle answered with another valid expression counts as
// wrong.
func Mixed() ([]Task, error) {
	return decodeStrict("mixed suite", corpus.MixedSuite())
}

// decodeStrict decodes JSON lines of Tasks, rejecting unknown fields, and
// checks them as Demo documents; path names the data in errors.
func decodeStrict(path string, data []byte) ([]Task, error) {
	var tasks []Task
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var t Task
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("%s line %d: %w: %w", path, i+1, ErrBadRecord, err)
		}
		if t.Gold != nil {
			if err := checkGold(t.Gold); err != nil {
				return nil, fmt.Errorf("%s line %d: %w: gold program: %w", path, i+1, ErrBadRecord, err)
			}
		}
		answerFromGold(&t)
		tasks = append(tasks, t)
	}
	if err := uniqueIDs(path, tasks); err != nil {
		return nil, err
	}
	return tasks, nil
}
