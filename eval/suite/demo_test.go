package suite

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/corpus"
	"github.com/planner-engine/planner/plan"
	"github.com/planner-engine/planner/tools/calc"
	"github.com/planner-engine/planner/tools/search"
)

// shapes are the task-shape tags; every task carries exactly one.
var shapes = []string{"single", "multi-hop", "arithmetic", "parallel"}

func loadTasks(t *testing.T) []Task {
	t.Helper()
	tasks, err := Demo()
	require.NoError(t, err)
	require.NotEmpty(t, tasks)
	return tasks
}

func TestDemoSuiteHasUniqueIDsAndTenTasksOfEachShape(t *testing.T) {
	tasks := loadTasks(t)
	assert.Len(t, tasks, 40)
	ids := map[string]bool{}
	count := map[string]int{}
	for _, task := range tasks {
		assert.False(t, ids[task.ID], "duplicate id %s", task.ID)
		ids[task.ID] = true
		assert.NotEmpty(t, task.Question, task.ID)
		assert.NotEmpty(t, task.Answer, task.ID)
		require.NotNil(t, task.Gold, task.ID)
		assert.Equal(t, task.Answer, task.Gold.Answer, task.ID)
		var own []string
		for _, tag := range task.Tags {
			if slices.Contains(shapes, tag) {
				own = append(own, tag)
			}
		}
		if assert.Len(t, own, 1, "%s: exactly one shape tag of %v", task.ID, shapes) {
			count[own[0]]++
		}
	}
	for _, s := range shapes {
		assert.Equal(t, 10, count[s], "tasks tagged %s", s)
	}
}

func TestDemoSuiteGoldStepsFormValidPrograms(t *testing.T) {
	for _, task := range loadTasks(t) {
		t.Run(task.ID, func(t *testing.T) {
			require.NotNil(t, task.Gold)
			require.NotEmpty(t, task.Gold.Steps)
			pos := map[string]int{}
			for i, st := range task.Gold.Steps {
				_, dup := pos[st.ID]
				require.False(t, dup, "duplicate step id %s", st.ID)
				assert.Contains(t, []string{search.DefaultName, calc.Name}, st.Tool, "step %s", st.ID)
				assert.NotEmpty(t, st.Output, "step %s needs the expected output", st.ID)
				for _, dep := range st.DependsOn {
					p, ok := pos[dep]
					if assert.True(t, ok, "step %s depends on %s, which is not an earlier step", st.ID, dep) {
						assert.Less(t, p, i)
					}
				}
				refs := plan.References(st.Input)
				for _, r := range refs {
					assert.Contains(t, st.DependsOn, r, "step %s references #E%s without depending on it", st.ID, r)
				}
				for _, dep := range st.DependsOn {
					assert.Contains(t, refs, dep, "step %s depends on %s but never references #E%s", st.ID, dep, dep)
				}
				pos[st.ID] = i
			}
		})
	}
}

func TestDemoSuiteTagsMatchTheGoldProgramShape(t *testing.T) {
	for _, task := range loadTasks(t) {
		t.Run(task.ID, func(t *testing.T) {
			steps := task.Gold.Steps
			tool := map[string]string{}
			searchOnSearch, independent := false, 0
			for _, st := range steps {
				tool[st.ID] = st.Tool
				if len(st.DependsOn) == 0 {
					independent++
				}
				for _, dep := range st.DependsOn {
					if st.Tool == search.DefaultName && tool[dep] == search.DefaultName {
						searchOnSearch = true
					}
				}
			}
			last := steps[len(steps)-1]
			switch {
			case slices.Contains(task.Tags, "single"):
				require.Len(t, steps, 1)
				assert.Equal(t, search.DefaultName, last.Tool)
				assert.Contains(t, last.Output, task.Answer, "the looked-up fact gives the answer")
			case slices.Contains(task.Tags, "multi-hop"):
				assert.True(t, searchOnSearch, "a lookup must use the result of an earlier lookup")
			case slices.Contains(task.Tags, "arithmetic"):
				assert.Equal(t, calc.Name, last.Tool, "the answer is computed")
			case slices.Contains(task.Tags, "parallel"):
				assert.False(t, searchOnSearch, "lookups must be independent")
				assert.GreaterOrEqual(t, independent, 2, "at least two lookups can run at once")
			}
			if last.Tool == calc.Name {
				assert.Equal(t, task.Answer, last.Output, "the final calculation yields the answer")
			}
		})
	}
}

// substitute replaces #E<id> in input with the outputs of earlier steps,
// leaving references to unknown steps as they are.
func substitute(input string, outputs map[string]string) string {
	return plan.ReplaceReferences(input, func(id string) string {
		if out, ok := outputs[id]; ok {
			return out
		}
		return "#E" + id
	})
}

func TestDemoSuiteGoldStepsReproduceWithTheRealTools(t *testing.T) {
	reproduceWithTheRealTools(t, loadTasks(t))
}

// reproduceWithTheRealTools checks that each gold step of tasks gives its
// output with the real tools: the calculator's result, and a search whose
// top documents and observation show the output.
func reproduceWithTheRealTools(t *testing.T, tasks []Task) {
	t.Helper()
	ctx := context.Background()
	searchTool, err := search.New(ctx, search.FromFS(corpus.Demo()))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, searchTool.Close()) })
	calculator := calc.New()
	for _, task := range tasks {
		t.Run(task.ID, func(t *testing.T) {
			outputs := map[string]string{}
			for _, st := range task.Gold.Steps {
				input := substitute(st.Input, outputs)
				require.NotContains(t, input, "#E", "step %s: unresolved reference", st.ID)
				switch st.Tool {
				case calc.Name:
					got, err := calculator.Call(ctx, input)
					require.NoError(t, err, "step %s: %q", st.ID, input)
					assert.Equal(t, st.Output, got, "step %s: %q", st.ID, input)
				case search.DefaultName:
					hits, err := searchTool.Index().Search(ctx, input, search.DefaultTopK)
					require.NoError(t, err)
					found := slices.ContainsFunc(hits, func(h search.Hit) bool {
						return containsFold(h.Doc.Title+"\n"+h.Doc.Text, st.Output)
					})
					assert.True(t, found, "step %s: no top-%d document for %q contains %q", st.ID, search.DefaultTopK, input, st.Output)
					obs, err := searchTool.Call(ctx, input)
					require.NoError(t, err)
					assert.True(t, containsFold(obs, st.Output), "step %s: observation for %q does not show %q:\n%s", st.ID, input, st.Output, obs)
				}
				outputs[st.ID] = st.Output
			}
		})
	}
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

func TestDemoRejectsUnknownFieldsAndBadGold(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"unknown field", `{"id":"a","question":"q","answer":"1"}` + "\n" + `{"id":"b","question":"q","anwser":"1"}`, `line 2: bad suite record: json: unknown field "anwser"`},
		{"unknown gold field", `{"id":"a","question":"q","gold":{"answer":"1","steps":[{"id":"1","tool":"t","input":"x","ouput":"1"}]}}`, `unknown field "ouput"`},
		{"gold depends on a later step", `{"id":"a","question":"q","gold":{"answer":"1","steps":[{"id":"1","tool":"t","input":"#E2"},{"id":"2","tool":"t","input":"x"}]}}`, `depends on "2"`},
		{"duplicate id", `{"id":"a","question":"q"}` + "\n" + `{"id":"a","question":"r"}`, `task id "a" already used`},
		{"unknown type", `{"id":"a","question":"q","gold":{"answer":"1","type":"trivia"}}`, `unknown type "trivia" (known: knowledge, lookup, arithmetic, multihop, puzzle)`},
		{"memory prior above 1", `{"id":"a","question":"q","gold":{"answer":"1","memory":1.5}}`, `memory prior 1.5 is outside [0,1]`},
		{"negative memory prior", `{"id":"a","question":"q","gold":{"answer":"1","memory":-0.1}}`, `memory prior -0.1 is outside [0,1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeStrict("demo suite", []byte(tt.data))
			require.ErrorIs(t, err, ErrBadRecord)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	tasks, err := decodeStrict("demo suite", []byte(`{"id":"a","question":"q","tags":["x"],"gold":{"answer":"42","steps":[{"id":"1","tool":"calculator","input":"6*7","output":"42"}]}}`))
	require.NoError(t, err)
	require.Len(t, tasks, 1)
	assert.Equal(t, "42", tasks[0].Answer, "the gold answer is the reference when the record has none")
	assert.Equal(t, []string{"x"}, tasks[0].Tags)
	assert.Equal(t, "6*7", tasks[0].Gold.Steps[0].Input)
}

func TestDemoTasksMatchTheEmbeddedSuite(t *testing.T) {
	tasks := loadTasks(t)
	var lines []string
	for _, l := range strings.Split(string(corpus.DemoSuite()), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	require.Len(t, tasks, len(lines))
	for i, l := range lines {
		var rec struct {
			Answer string `json:"answer"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &rec))
		assert.Equal(t, rec.Answer, tasks[i].Answer, "%s: every demo record states its answer", tasks[i].ID)
	}
	plain := AgentTasks(tasks)
	require.Len(t, plain, len(tasks))
	for i := range tasks {
		assert.Equal(t, tasks[i].Task, plain[i])
	}
}
