package compose_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/llmtest"
	"github.com/planner-engine/planner/pipeline"
	"github.com/planner-engine/planner/state"
	"github.com/planner-engine/planner/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
)

type fixedModels struct{ m llms.Model }

func (f fixedModels) Model(context.Context, config.LLM, string) (llm.Model, error) {
	return llm.Model{LLM: f.m}, nil
}

var intList = regexp.MustCompile(`\[[\d,\s]*\]`)

// sorter sorts the last list of numbers in a prompt, or merges the last
// two when asked to merge; every call whose number is a multiple of
// every drops its result's last element, as a careless model would.
type sorter struct {
	calls atomic.Int32
	every int32
}

func (s *sorter) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	n := s.calls.Add(1)
	p := llmtest.LastText(msgs)
	lists := intList.FindAllString(p, -1)
	take := 1
	if strings.Contains(p, "Merge these two") {
		take = 2
	}
	var nums []int
	for _, l := range lists[len(lists)-take:] {
		var part []int
		if err := json.Unmarshal([]byte(l), &part); err != nil {
			return nil, err
		}
		nums = append(nums, part...)
	}
	slices.Sort(nums)
	if s.every > 0 && n%s.every == 0 && len(nums) > 0 {
		nums = nums[:len(nums)-1]
	}
	out, _ := json.Marshal(nums)
	return llmtest.TextResponse(string(out)), nil
}

func (s *sorter) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, s, prompt, opts...)
}

func buildConfig(t *testing.T, name string, m llms.Model) *pipeline.Pipeline {
	t.Helper()
	cfg, err := config.Load(filepath.Join("..", "..", "configs", name))
	require.NoError(t, err)
	p, err := pipeline.Build(context.Background(), cfg, pipeline.Options{Registry: planner.NodeKinds(), Models: fixedModels{m}, LLM: config.LLM{Provider: "fake"}})
	require.NoError(t, err)
	return p
}

// The shipped Graph of Thoughts pipeline sorts a list with a model that
// drops a number in every third reply: keeping the best of each round's
// attempts by the error score still gives the sorted list.
func TestGoTSortsDespiteCarelessReplies(t *testing.T) {
	for _, every := range []int32{0, 3, 2} {
		m := &sorter{every: every}
		p := buildConfig(t, "got.yaml", m)
		rec := &trace.Recorder{}
		res, err := p.Run(context.Background(), state.Task{ID: "s1", Question: "Sort this list of numbers in ascending order: [5, 1, 9, 3, 3, 0, 7, 2, 8, 1]"}, trace.New("run", rec))
		require.NoError(t, err, "every %d", every)
		assert.Equal(t, "[0,1,1,2,3,3,5,7,8,9]", res.State.Answer, "every %d", every)
		assert.True(t, res.State.Complete)
		assert.Equal(t, int32(11), m.calls.Load(), "2 halves x 3 tries, 3 merges, 2 refinements")
	}
}

// Graph export draws the map's inner graph.
func TestGoTDrawsItsInnerGraph(t *testing.T) {
	p := buildConfig(t, "got.yaml", &sorter{})
	mm := p.Graph().Mermaid(p.Kinds(), p.Nested()...)
	assert.Contains(t, mm, `subgraph n1_g["sort_halves: map, per item: got/sort_halves"]`)
	assert.Contains(t, mm, "n1_start ==>|fork| n1_n0", "the inner fan-out")
	assert.Contains(t, mm, "n1 -.->|runs| n1_start")
	dot := p.Graph().DOT("got", p.Kinds(), p.Nested()...)
	assert.Contains(t, dot, `subgraph "cluster_sort_halves/"`)
	assert.Contains(t, dot, `"sort_halves/try1" -> "sort_halves/keep";`)
}
