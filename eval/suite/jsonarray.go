package suite

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/planner-engine/planner/state"
)

// qaRecord is the union of the HotpotQA and ParallelQA record fields.
type qaRecord struct {
	UID      string          `json:"_id"`
	ID       json.RawMessage `json:"id"`
	Question *string         `json:"question"`
	Answer   *string         `json:"answer"`
	Type     string          `json:"type"`
	Level    string          `json:"level"`
	Branch   *int            `json:"branch"`
}

// decodeQA reads one record and checks the fields every QA format needs.
func (s source) decodeQA(index, line int, raw json.RawMessage) (qaRecord, string, error) {
	var rec qaRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return rec, "", s.badRecord(line, index, "%v", err)
	}
	if rec.Question == nil || strings.TrimSpace(*rec.Question) == "" {
		return rec, "", s.badRecord(line, index, `missing "question"`)
	}
	if rec.Answer == nil {
		return rec, "", s.badRecord(line, index, `missing "answer"`)
	}
	id, err := rawID(rec.ID)
	if err != nil {
		return rec, "", s.badRecord(line, index, `"id" must be a string or a number, got %s`, rec.ID)
	}
	if rec.UID != "" {
		id = rec.UID
	}
	return rec, id, nil
}

// rawID reads an id given as a JSON string or number; absent gives "".
func rawID(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		return str, nil
	}
	var num json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&num); err != nil {
		return "", err
	}
	return num.String(), nil
}

// qaTasks reads an array of QA records (checked by decodeQA), making each
// one's task with task from the record, its id ("" when it has none) and
// its index.
func (s source) qaTasks(task func(rec qaRecord, id string, index int) Task) ([]Task, error) {
	var tasks []Task
	err := s.records(func(index, line int, raw json.RawMessage) error {
		rec, id, err := s.decodeQA(index, line, raw)
		if err != nil {
			return err
		}
		tasks = append(tasks, task(rec, id, index))
		return nil
	})
	return tasks, err
}

// hotpotqa reads a HotpotQA-style array. Ids are the record's "_id" or
// "id" when present, else hotpotqa-<index>; "type" and "level" become tags.
func (s source) hotpotqa() ([]Task, error) {
	return s.qaTasks(func(rec qaRecord, id string, index int) Task {
		if id == "" {
			id = "hotpotqa-" + strconv.Itoa(index)
		}
		t := Task{Task: state.Task{ID: id, Question: *rec.Question, Answer: *rec.Answer}}
		for _, tag := range []string{rec.Type, rec.Level} {
			if tag = strings.TrimSpace(tag); tag != "" {
				t.Tags = append(t.Tags, tag)
			}
		}
		return t
	})
}

// parallelqa reads LLMCompiler's ParallelQA array. Ids are
// parallelqa-<id> (parallelqa-<index> without an id); "branch", the number
// of independent lookups, becomes the tag branch-<n>.
func (s source) parallelqa() ([]Task, error) {
	return s.qaTasks(func(rec qaRecord, id string, index int) Task {
		if id == "" {
			id = strconv.Itoa(index)
		}
		t := Task{Task: state.Task{ID: "parallelqa-" + id, Question: *rec.Question, Answer: *rec.Answer}}
		if rec.Branch != nil {
			t.Tags = append(t.Tags, "branch-"+strconv.Itoa(*rec.Branch))
		}
		return t
	})
}
