package suite

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/verify"
)

func fixture(name string) string { return filepath.Join("testdata", name) }

// writeFile writes content to a new file in a temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func ids(tasks []Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.ID
	}
	return out
}

func TestDetectRecognisesEachFormat(t *testing.T) {
	tests := []struct {
		file string
		want Format
	}{
		{"tasks.jsonl", FormatJSONL},
		{"gsm8k.jsonl", FormatGSM8K},
		{"24.csv", FormatGame24},
		{"hotpot.json", FormatHotpotQA},
		{"parallelqa.json", FormatParallelQA},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := Detect(context.Background(), fixture(tt.file))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)

			auto, format, err := LoadFormat(context.Background(), fixture(tt.file))
			require.NoError(t, err)
			assert.Equal(t, tt.want, format, "LoadFormat reports the detected format")
			explicit, err := Load(context.Background(), fixture(tt.file), WithFormat(tt.want))
			require.NoError(t, err)
			assert.Equal(t, explicit, auto)
		})
	}
}

func TestDetectUsesContentBeforeExtension(t *testing.T) {
	tests := []struct {
		name, file, content string
		want                Format
	}{
		{"csv header without csv extension", "puzzles.txt", "Rank,Puzzles\n1,1 1 4 6\n", FormatGame24},
		{"json lines in a .json file", "lines.json", `{"question":"q","answer":"a"}` + "\n", FormatJSONL},
		{"byte order mark", "bom.jsonl", "\ufeff" + `{"question":"q","answer":"x\n#### 3"}` + "\n", FormatGSM8K},
		{"gsm8k shape needs the #### line", "plain.jsonl", `{"question":"q","answer":"3"}` + "\n", FormatJSONL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Detect(context.Background(), writeFile(t, tt.file, tt.content))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := Detect(context.Background(), writeFile(t, "notes.txt", "just some words\n"))
	assert.ErrorIs(t, err, ErrUnknownFormat)
	assert.Contains(t, err.Error(), "notes.txt")
}

func TestLoadJSONLKeepsTasksAndFillsMissingIDs(t *testing.T) {
	tasks, err := Load(context.Background(), fixture("tasks.jsonl"))
	require.NoError(t, err)
	require.Len(t, tasks, 3)
	assert.Equal(t, []string{"capital", "tasks-1", "plan"}, ids(tasks))
	assert.Equal(t, "Paris", tasks[0].Answer)
	assert.Equal(t, []string{"geo"}, tasks[0].Tags)
	require.NotNil(t, tasks[2].Gold)
	require.Len(t, tasks[2].Gold.Steps, 3)
	assert.Equal(t, []string{"1", "2"}, tasks[2].Gold.Steps[2].DependsOn)
	assert.Equal(t, "#E1 - #E2", tasks[2].Gold.Steps[2].Input)
}

func TestLoadJSONLTakesTheGoldAnswerWhenTheRecordHasNone(t *testing.T) {
	path := writeFile(t, "gold.jsonl", `{"id":"none","question":"q","gold":{"steps":[{"id":"1","tool":"calculator","input":"6*7","output":"42"}],"answer":"42"}}
{"id":"blank","question":"q","answer":"  ","gold":{"answer":"7"}}
{"id":"own","question":"q","answer":"41","gold":{"answer":"42"}}
{"id":"nogold","question":"q"}
`)
	tasks, err := Load(context.Background(), path)
	require.NoError(t, err)
	require.Len(t, tasks, 4)
	assert.Equal(t, "42", tasks[0].Answer, "no answer: the gold answer")
	assert.Equal(t, "7", tasks[1].Answer, "a blank answer is no answer")
	assert.Equal(t, "41", tasks[2].Answer, "a stated answer is kept")
	assert.Empty(t, tasks[3].Answer)
	assert.True(t, verify.ExactMatch{}.Score("Answer: 42", tasks[0].Reference()).Correct, "scorers judge against the gold answer")
}

func TestLoadReportsBadRecordsWithFileAndLine(t *testing.T) {
	tests := []struct {
		name, file, content string
		format              Format
		wantPos             string
		wantMsg             string
	}{
		{"jsonl invalid json", "a.jsonl", `{"question":"q1"}` + "\n\n" + `{"question": oops}` + "\n", FormatJSONL, "a.jsonl:3: record 1", "invalid character"},
		{"jsonl missing question", "b.jsonl", `{"id":"x","answer":"a"}` + "\n", FormatJSONL, "b.jsonl:1: record 0", `missing "question"`},
		{"jsonl duplicate id", "c.jsonl", `{"id":"x","question":"q"}` + "\n" + `{"id":"x","question":"r"}` + "\n", FormatJSONL, "c.jsonl: record 1", `task id "x" already used by record 0`},
		{"jsonl gold depends on later step", "d.jsonl", `{"question":"q","gold":{"steps":[{"id":"1","tool":"t","input":"#E2"},{"id":"2","tool":"t","input":"x"}],"answer":"a"}}` + "\n", FormatJSONL, "d.jsonl:1: record 0", `depends on "2"`},
		{"jsonl gold duplicate step", "e.jsonl", `{"question":"q","gold":{"steps":[{"id":"1","tool":"t","input":"a"},{"id":"1","tool":"t","input":"b"}],"answer":"a"}}` + "\n", FormatJSONL, "e.jsonl:1: record 0", `step id "1" is used twice`},
		{"gsm8k without final line", "f.jsonl", `{"question":"q","answer":"2 + 2 = <<2+2=4>>4"}` + "\n", FormatGSM8K, "f.jsonl:1: record 0", "####"},
		{"gsm8k missing answer", "g.jsonl", `{"question":"q"}` + "\n", FormatGSM8K, "g.jsonl:1: record 0", `missing "answer"`},
		{"game24 bad number", "h.csv", "Rank,Puzzles\n1,1 1 4 6\n2,1 x 4 6\n", FormatGame24, "h.csv:3: record 1", `"x" is not a non-negative integer`},
		{"game24 no puzzles column", "i.csv", "Rank,Numbers\n1,1 1 4 6\n", FormatGame24, "i.csv:1", `no "Puzzles" column`},
		{"hotpotqa missing answer", "j.json", "[\n {\"question\": \"q\", \"answer\": \"a\"},\n {\"question\": \"r\"}\n]", FormatHotpotQA, "j.json:3: record 1", `missing "answer"`},
		{"hotpotqa wrong type", "k.json", "[\n {\"question\": \"q\", \"answer\": 5}\n]", FormatHotpotQA, "k.json:2: record 0", "cannot unmarshal number"},
		{"hotpotqa syntax error", "l.json", "[\n {\"question\": \"q\", \"answer\": \"a\"},\n {\"question\" \"r\"}\n]", FormatHotpotQA, "l.json:3: record 1", "invalid character"},
		{"not an array", "m.json", `{"question": "q"}`, FormatHotpotQA, "m.json:1", "want a JSON array"},
		{"parallelqa bad id", "n.json", `[{"id": [1], "question": "q", "answer": "a", "branch": 2}]`, FormatParallelQA, "n.json:1: record 0", `"id" must be a string or a number`},
		{"parallelqa duplicate id", "o.json", `[{"id": "1", "question": "q", "answer": "a"}, {"id": 1, "question": "r", "answer": "b"}]`, FormatParallelQA, "o.json: record 1", `"parallelqa-1" already used`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.file, tt.content)
			_, err := Load(context.Background(), path, WithFormat(tt.format))
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrBadRecord)
			assert.Contains(t, err.Error(), filepath.Join(filepath.Dir(path), tt.wantPos))
			assert.Contains(t, err.Error(), tt.wantMsg)
		})
	}
}

func TestGSM8KGoldBuildsCalculatorProgram(t *testing.T) {
	tests := []struct {
		name      string
		solution  string
		answer    string
		steps     []GoldStep
		reasoning []string
	}{
		{
			name:     "chained steps reference earlier outputs",
			solution: "Half of 48 is 48/2 = <<48/2=24>>24.\nAdd 48: 24 + 48 = <<24+48=72>>72.\n#### 72",
			answer:   "72",
			steps: []GoldStep{
				{ID: "1", Tool: "calculator", Input: "48/2", Output: "24"},
				{ID: "2", Tool: "calculator", Input: "#E1+48", DependsOn: []string{"1"}, Output: "72"},
			},
			reasoning: []string{"Half of 48 is 48/2 = 24.", "Add 48: 24 + 48 = 72."},
		},
		{
			name:     "two dependencies and decimals",
			solution: "A = <<4*2.50=10>>10\nB = <<2*1.25=2.5>>2.50\nC = <<10+.5*0+2.50=12.5>>12.5\n#### 12.5",
			answer:   "12.5",
			steps: []GoldStep{
				{ID: "1", Tool: "calculator", Input: "4*2.50", Output: "10"},
				{ID: "2", Tool: "calculator", Input: "2*1.25", Output: "2.5"},
				{ID: "3", Tool: "calculator", Input: "#E1+.5*0+#E2", DependsOn: []string{"1", "2"}, Output: "12.5"},
			},
			reasoning: []string{"A = 10", "B = 2.50", "C = 12.5"},
		},
		{
			name:     "most recent equal output wins",
			solution: "<<1+1=2>>2\n<<4-2=2>>2\n<<2*3=6>>6\n#### 6",
			answer:   "6",
			steps: []GoldStep{
				{ID: "1", Tool: "calculator", Input: "1+1", Output: "2"},
				{ID: "2", Tool: "calculator", Input: "4-#E1", DependsOn: []string{"1"}, Output: "2"},
				{ID: "3", Tool: "calculator", Input: "#E2*3", DependsOn: []string{"2"}, Output: "6"},
			},
			reasoning: []string{"2", "2", "6"},
		},
		{
			name:      "thousands separators removed from the answer",
			solution:  "1,200 * 2 = <<1200*2=2400>>2,400\n#### 2,400",
			answer:    "2400",
			steps:     []GoldStep{{ID: "1", Tool: "calculator", Input: "1200*2", Output: "2400"}},
			reasoning: []string{"1,200 * 2 = 2,400"},
		},
		{
			name:      "no annotations",
			solution:  "Tom will be 7 + 2 = 9.\n#### 9",
			answer:    "9",
			reasoning: []string{"Tom will be 7 + 2 = 9."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := GSM8KGold(tt.solution)
			require.NoError(t, err)
			assert.Equal(t, tt.answer, g.Answer)
			assert.Equal(t, tt.steps, g.Steps)
			assert.Equal(t, tt.reasoning, g.Reasoning)
			assert.NoError(t, checkGold(g))
		})
	}
}

func TestGSM8KGoldRejectsMalformedSolutions(t *testing.T) {
	for _, sol := range []string{"2 + 2 = 4", "#### ", "x = <<2+2>>4\n#### 4"} {
		_, err := GSM8KGold(sol)
		assert.Error(t, err, sol)
	}
}

func TestLoadGSM8KNumbersTasksAndAttachesGold(t *testing.T) {
	tasks, err := Load(context.Background(), fixture("gsm8k.jsonl"), WithFormat(FormatGSM8K))
	require.NoError(t, err)
	assert.Equal(t, []string{"gsm8k-0", "gsm8k-1", "gsm8k-2", "gsm8k-3"}, ids(tasks))
	assert.Equal(t, []string{"6", "12.5", "16800", "9"}, []string{tasks[0].Answer, tasks[1].Answer, tasks[2].Answer, tasks[3].Answer})
	for _, task := range tasks {
		require.NotNil(t, task.Gold, task.ID)
		assert.Equal(t, task.Answer, task.Gold.Answer)
		for _, st := range task.Gold.Steps {
			assert.True(t, stepReproduces(t, task.Gold, st), "%s step %s: %q = %q", task.ID, st.ID, st.Input, st.Output)
		}
	}
	assert.Equal(t, "#E1/3", tasks[0].Gold.Steps[1].Input)
	assert.Empty(t, tasks[3].Gold.Steps)
}

func TestLoadGame24PosesPuzzlesWithSolutions(t *testing.T) {
	tasks, err := Load(context.Background(), fixture("24.csv"))
	require.NoError(t, err)
	assert.Equal(t, []string{"game24-0", "game24-1", "game24-2", "game24-3", "game24-4"}, ids(tasks))
	assert.Equal(t, "Use 4 5 6 10 and + - * / to obtain 24, using each number exactly once.", tasks[4].Question)
	for _, task := range tasks {
		nums, err := verify.PuzzleNumbers(task.Question)
		require.NoError(t, err)
		assert.Len(t, nums, 4)
		assert.Empty(t, task.Answer, "no single reference answer")
		if task.ID == "game24-3" {
			assert.Nil(t, task.Gold, "1 1 1 1 has no solution")
			continue
		}
		require.NotNil(t, task.Gold, task.ID)
		assert.NoError(t, verify.Verify24(nums, task.Gold.Answer))
		assert.Len(t, task.Gold.Reasoning, 3)
		assert.True(t, verify.Game24{}.Score("Answer: "+task.Gold.Answer, task.Reference()).Correct)
	}
}

func TestLoadHotpotQAUsesOwnIDsAndTypeTags(t *testing.T) {
	tasks, err := Load(context.Background(), fixture("hotpot.json"))
	require.NoError(t, err)
	assert.Equal(t, []string{"hotpotqa-0", "abc123", "def456"}, ids(tasks))
	assert.Equal(t, []string{"comparison"}, tasks[0].Tags)
	assert.Equal(t, []string{"bridge"}, tasks[1].Tags)
	assert.Equal(t, []string{"hard"}, tasks[2].Tags)
	assert.Equal(t, "Gustave Eiffel", tasks[1].Answer)
}

func TestLoadParallelQATagsBranches(t *testing.T) {
	tasks, err := Load(context.Background(), fixture("parallelqa.json"))
	require.NoError(t, err)
	assert.Equal(t, []string{"parallelqa-1", "parallelqa-2"}, ids(tasks))
	assert.Equal(t, []string{"branch-2"}, tasks[0].Tags)
	assert.Equal(t, []string{"branch-3"}, tasks[1].Tags)
	assert.Equal(t, "mountain C", tasks[1].Answer)
}

func TestLoadSlicesLikePythonThenLimits(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want []string
	}{
		{"whole file", nil, []string{"0", "1", "2", "3", "4"}},
		{"slice", []Option{WithSlice(1, 3)}, []string{"1", "2"}},
		{"open end", []Option{WithSlice(3, math.MaxInt)}, []string{"3", "4"}},
		{"negative start", []Option{WithSlice(-2, math.MaxInt)}, []string{"3", "4"}},
		{"negative end", []Option{WithSlice(0, -3)}, []string{"0", "1"}},
		{"clamped", []Option{WithSlice(-100, 100)}, []string{"0", "1", "2", "3", "4"}},
		{"limit", []Option{WithLimit(2)}, []string{"0", "1"}},
		{"limit after slice", []Option{WithLimit(2), WithSlice(2, 5)}, []string{"2", "3"}},
		{"zero limit means none", []Option{WithLimit(0)}, []string{"0", "1", "2", "3", "4"}},
		{"limit above count", []Option{WithLimit(50)}, []string{"0", "1", "2", "3", "4"}},
	}
	whole, err := Load(context.Background(), fixture("24.csv"))
	require.NoError(t, err)
	positions := func(tasks []Task) []string {
		got := []string{}
		for _, task := range tasks {
			got = append(got, strings.TrimPrefix(task.ID, "game24-"))
		}
		return got
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tasks, err := Load(context.Background(), fixture("24.csv"), tt.opts...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, positions(tasks))
			selected, err := Select(whole, tt.opts...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, positions(selected), "Select follows Load's rules")
		})
	}
}

func TestASliceThatSelectsNothingSaysFromHowManyTasks(t *testing.T) {
	whole, err := Load(context.Background(), fixture("24.csv"))
	require.NoError(t, err)
	require.Len(t, whole, 5)
	for _, opts := range [][]Option{{WithSlice(3, 1)}, {WithSlice(900, 1000)}, {WithSlice(900, math.MaxInt), WithLimit(2)}, {WithSlice(0, -5)}} {
		_, err := Load(context.Background(), fixture("24.csv"), opts...)
		require.ErrorIs(t, err, ErrEmptySlice)
		assert.Contains(t, err.Error(), "24.csv: ", "Load names the file")
		assert.Contains(t, err.Error(), "selects nothing from the 5 tasks")
		assert.Contains(t, err.Error(), "a start from 0 to 4, or -5 to -1 counting from the end")
		_, err = Select(whole, opts...)
		require.ErrorIs(t, err, ErrEmptySlice)
		assert.Contains(t, err.Error(), "selects nothing from the 5 tasks")
	}
	_, err = Load(context.Background(), fixture("24.csv"), WithSlice(900, math.MaxInt))
	assert.Contains(t, err.Error(), "empty slice: 900: selects nothing", "an open end is written as ParseSlice reads it")
}

func TestAnEmptySuiteFileSaysItIsEmpty(t *testing.T) {
	tests := []struct {
		name, file, content string
		format              Format
		want                string
	}{
		{"empty file", "empty.jsonl", "", FormatAuto, "the suite is empty: the file has nothing in it"},
		{"blank lines and a byte order mark", "blank.txt", "\ufeff\n  \n\t\n", FormatAuto, "the suite is empty: the file has nothing in it"},
		{"empty file of a named format", "empty.json", "", FormatHotpotQA, "the suite is empty: the file has nothing in it"},
		{"empty JSON array", "empty.json", "[]\n", FormatAuto, "the suite is empty: the hotpotqa file holds no tasks"},
		{"CSV header alone", "24.csv", "Rank,Puzzles\n", FormatAuto, "the suite is empty: the game24 file holds no tasks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.file, tt.content)
			_, err := Load(context.Background(), path, WithFormat(tt.format))
			require.ErrorIs(t, err, ErrEmptySuite)
			assert.NotErrorIs(t, err, ErrUnknownFormat)
			assert.Equal(t, path+": "+tt.want, err.Error())
		})
	}
}

func TestParseSliceReadsCommandLineForms(t *testing.T) {
	tests := []struct {
		spec       string
		start, end int
	}{
		{"900:1000", 900, 1000},
		{"900:", 900, math.MaxInt},
		{":100", 0, 100},
		{"-100:", -100, math.MaxInt},
		{" 1 : -1 ", 1, -1},
		{":", 0, math.MaxInt},
	}
	for _, tt := range tests {
		start, end, err := ParseSlice(tt.spec)
		require.NoError(t, err, tt.spec)
		assert.Equal(t, tt.start, start, tt.spec)
		assert.Equal(t, tt.end, end, tt.spec)
	}
	for _, bad := range []string{"", "900", "a:b", "1:2:3", "1.5:2"} {
		_, _, err := ParseSlice(bad)
		assert.ErrorIs(t, err, ErrBadSlice, bad)
	}
}

func TestParseFormatAcceptsKnownNames(t *testing.T) {
	for _, f := range Formats() {
		got, err := ParseFormat(strings.ToUpper(string(f)))
		require.NoError(t, err)
		assert.Equal(t, f, got)
	}
	got, err := ParseFormat("")
	require.NoError(t, err)
	assert.Equal(t, FormatAuto, got)
	_, err = ParseFormat("xml")
	assert.ErrorIs(t, err, ErrUnknownFormat)
	_, err = Load(context.Background(), fixture("24.csv"), WithFormat("xml"))
	assert.ErrorIs(t, err, ErrUnknownFormat)
	assert.Contains(t, err.Error(), "24.csv")
}

func TestDefaultScorerMatchesFormat(t *testing.T) {
	tests := []struct {
		format Format
		want   verify.Scorer
	}{
		{FormatJSONL, verify.ExactMatch{}},
		{FormatGSM8K, verify.Numeric{}},
		{FormatGame24, verify.Game24{}},
		{FormatHotpotQA, verify.ExactMatch{}},
		{FormatParallelQA, verify.ExactMatch{}},
		{FormatSorting, verify.Sorting{}},
	}
	for _, tt := range tests {
		got, err := DefaultScorer(tt.format)
		require.NoError(t, err)
		assert.Equal(t, tt.want, got, tt.format)
	}
	for _, f := range []Format{FormatAuto, "xml"} {
		_, err := DefaultScorer(f)
		assert.ErrorIs(t, err, ErrUnknownFormat, f)
	}
}

func TestLoadStopsOnCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, file := range []string{"tasks.jsonl", "24.csv", "hotpot.json"} {
		_, err := Load(ctx, fixture(file))
		assert.ErrorIs(t, err, context.Canceled, file)
	}
	_, err := Detect(ctx, fixture("24.csv"))
	assert.ErrorIs(t, err, context.Canceled)
}

func TestLoadReportsMissingFile(t *testing.T) {
	_, err := Load(context.Background(), filepath.Join(t.TempDir(), "absent.jsonl"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
