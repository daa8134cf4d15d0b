package code_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/code"
)

func TestToolDescribesItself(t *testing.T) {
	tool := code.New(code.Config{})
	assert.Equal(t, "code", tool.Name())
	assert.Contains(t, tool.Description(), "Starlark")
	assert.Contains(t, tool.Description(), "pow(x, y)")
	assert.Contains(t, tool.Description(), "10,000,000 steps")
	meta := tool.Meta()
	assert.True(t, meta.ReadOnly)
	assert.False(t, meta.Network)
	assert.False(t, meta.Stateful)
	assert.Greater(t, meta.Timeout, code.DefaultTimeout)

	schema, err := json.Marshal(tool.Schema())
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"object","properties":{"code":{"type":"string","description":"The Starlark (Python-like) program to run; print results or end with an expression."}},"required":["code"]}`, string(schema))
}

func TestConfigDefaults(t *testing.T) {
	cfg := code.New(code.Config{}).Config()
	assert.Equal(t, code.Config{
		MaxSteps:     code.DefaultMaxSteps,
		Timeout:      code.DefaultTimeout,
		MaxOutput:    code.DefaultMaxOutput,
		MaxSource:    code.DefaultMaxSource,
		MaxDepth:     code.DefaultMaxDepth,
		MaxValueSize: code.DefaultMaxValueSize,
		MaxMemory:    code.DefaultMaxMemory,
	}, cfg)
	cfg = code.New(code.Config{MaxSteps: 5, Timeout: time.Second, MaxOutput: -1}).Config()
	assert.Equal(t, uint64(5), cfg.MaxSteps)
	assert.Equal(t, time.Second, cfg.Timeout)
	assert.Equal(t, code.DefaultMaxOutput, cfg.MaxOutput)
	assert.Equal(t, time.Second+2*time.Second, code.New(code.Config{Timeout: time.Second}).Meta().Timeout)
}

func TestCallRunsPrograms(t *testing.T) {
	tests := []struct {
		name, program, want string
	}{
		{"arithmetic", "1 + 2 * 3", "7"},
		{"exact big integers", "pow(2, 100) + 1", "1267650600228229401496703205377"},
		{"true division", "7 / 2, 7 // 2, 7 % 3, -7 // 2", "(3.5, 3, 1, -4)"},
		{"loop with augmented assignment", "total = 0\nfor i in range(1, 11):\n    total += i * i\ntotal", "385"},
		{"while loop at top level", "n, steps = 27, 0\nwhile n != 1:\n    n = n // 2 if n % 2 == 0 else 3 * n + 1\n    steps += 1\nsteps", "111"},
		{"function and recursion", "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n[fib(i) for i in range(10)]", "[0, 1, 1, 2, 3, 5, 8, 13, 21, 34]"},
		{"print then last expression", "print('hello', 'world')\nx = 6 * 7\nx", "hello world\n42"},
		{"print only", "for i in range(3):\n    print(i)", "0\n1\n2"},
		{"print sep and end", "print('a', 'b', sep='-', end='')\nprint('!')", "a-b!"},
		{"print sep None", "print('a', 'b', sep=None, end=None)", "a b"},
		{"print renders values", "print([1, 'a', None], {'k': (1,)})", "[1, \"a\", None] {\"k\": (1,)}"},
		{"last expression None is not shown", "print('x')\nNone", "x"},
		{"last call returning None", "print('only this')", "only this"},
		{"string value is shown as repr", "'a' + 'b'", "\"ab\""},
		{"no output", "x = 1", code.NoOutput},
		{"comment only", "# nothing to do", code.NoOutput},
		{"json", "data = json.decode('{\"a\": [1, 2, 3]}')\nprint(sum(data['a']))\njson.encode({'n': len(data['a'])})", "6\n\"{\\\"n\\\":3}\""},
		{"math", "math.sqrt(16), math.floor(2.7), math.factorial(10), math.gcd(12, 18)", "(4.0, 2, 3628800, 6)"},
		{"sets", "s = set([3, 1, 2])\ns.add(3)\nsorted(s)", "[1, 2, 3]"},
		{"dict counting", "counts = {}\nfor w in 'a b a c a'.split():\n    counts[w] = counts.get(w, 0) + 1\nsorted(counts.items(), key=lambda kv: -kv[1])[0]", "(\"a\", 3)"},
		{"list += keeps identity", "a = [1]\nb = a\na += [2]\nb", "[1, 2]"},
		{"nested augmented target", "m = {'k': [1]}\nm['k'] += [2]\nm['k'][0] *= 10\nm", "{\"k\": [10, 2]}"},
		{"string formatting", "'%d items cost %s' % (3, 4.5) + ' / ' + '{} and {}'.format('x', 'y')", "\"3 items cost 4.5 / x and y\""},
		{"Python format specs", "'%5.2f|%-4s|%03d' % (3.14159, 'ab', 7) + ' ' + '{:>6,}|{:.1%}|{name:*^7}'.format(12345, 0.25, name='x')", "\" 3.14|ab  |007 12,345|25.0%|***x***\""},
		{"string methods", "s = 'a-b-c'\ns.replace('-', '+'), '/'.join(['x', 'y']), s.split('-')", "(\"a+b+c\", \"x/y\", [\"a\", \"b\", \"c\"])"},
		{"characters", "[c for c in 'abc'.elems()]", "[\"a\", \"b\", \"c\"]"},
		{"globals can be reassigned", "x = 1\nx = x + 1\nx", "2"},
		{"if at top level", "x = 5\nif x > 3:\n    print('big')\nelse:\n    print('small')", "big"},
		{"semicolons", "a = 1; b = 2; a + b", "3"},
		{"fenced program", "```python\nx = 2\nx * 21\n```", "42"},
	}
	tool := code.New(code.Config{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tool.Call(context.Background(), tc.program)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCallAcceptsTheFormsModelsWrite(t *testing.T) {
	tests := []struct {
		name, input string
	}{
		{"plain text", "print(6 * 7)"},
		{"native tool call", `{"code": "print(6 * 7)"}`},
		{"native tool call with another key", `{"input": "print(6 * 7)"}`},
		{"fence with python tag", "```python\nprint(6 * 7)\n```"},
		{"fence with py tag", "```py\nprint(6 * 7)\n```"},
		{"fence with starlark tag", "```starlark\nprint(6 * 7)\n```"},
		{"fence without tag", "```\nprint(6 * 7)\n```"},
		{"fence after prose", "Here is the code:\n```python\nprint(6 * 7)\n```\nThat prints the answer."},
		{"unclosed fence", "```python\nprint(6 * 7)\n"},
		{"JSON with fenced code", `{"code": "` + "```python\\nprint(6 * 7)\\n```" + `"}`},
		{"indented", "    x = 6\n    print(x * 7)\n"},
		{"CRLF", "x = 6\r\nprint(x * 7)\r\n"},
		{"backquoted", "`print(6 * 7)`"},
	}
	tool := code.New(code.Config{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tool.Call(context.Background(), tc.input)
			require.NoError(t, err)
			assert.Equal(t, "42", got)
		})
	}
}

func TestEmptyInputIsBadInput(t *testing.T) {
	for _, in := range []string{"", "   \n", "```python\n```", `{"code": ""}`} {
		_, err := code.New(code.Config{}).Call(context.Background(), in)
		require.ErrorIs(t, err, tools.ErrBadInput, "%q", in)
		assert.Contains(t, err.Error(), "no program given")
	}
}

func TestRunReportsOutputValueAndSteps(t *testing.T) {
	res, err := code.New(code.Config{}).Run(context.Background(), "print('hi')\n[1, 2]")
	require.NoError(t, err)
	assert.Equal(t, "hi\n", res.Output)
	assert.Equal(t, "[1, 2]", res.Value)
	assert.False(t, res.OutputTruncated)
	assert.False(t, res.ValueTruncated)
	assert.Positive(t, res.Steps)
	assert.Equal(t, "hi\n[1, 2]", res.String())
}

func TestOutputIsCapped(t *testing.T) {
	tool := code.New(code.Config{MaxOutput: 64})
	res, err := tool.Run(context.Background(), "for i in range(1000):\n    print('line', i)\n'done'")
	require.NoError(t, err)
	assert.LessOrEqual(t, len(res.Output), 64)
	assert.True(t, res.OutputTruncated)
	assert.Equal(t, `"done"`, res.Value)
	obs := res.String()
	assert.Contains(t, obs, "line 0\n")
	assert.Contains(t, obs, "…[printed output truncated here]\n\"done\"")

	res, err = tool.Run(context.Background(), "list(range(1000))")
	require.NoError(t, err)
	assert.True(t, res.ValueTruncated)
	assert.LessOrEqual(t, len(res.Value), 64)
	assert.True(t, len(res.String()) < 100)
	assert.Contains(t, res.String(), "…[value truncated]")
}

func TestCallsShareNoState(t *testing.T) {
	tool := code.New(code.Config{})
	_, err := tool.Call(context.Background(), "secret = 42\nL = [1]")
	require.NoError(t, err)
	_, err = tool.Call(context.Background(), "secret")
	require.ErrorIs(t, err, code.ErrSyntax)
	assert.Contains(t, err.Error(), "undefined: secret")
	got, err := tool.Call(context.Background(), "L = [1]\nL.append(2)\nL")
	require.NoError(t, err)
	assert.Equal(t, "[1, 2]", got)
}

func TestConcurrentCalls(t *testing.T) {
	tool := code.New(code.Config{})
	var wg sync.WaitGroup
	errs := make([]error, 16)
	outs := make([]string, 16)
	for i := range 16 {
		wg.Go(func() {
			prog := fmt.Sprintf("n = %d\ntotal = 0\nfor i in range(1000):\n    total += n\nprint('worker', n)\ntotal", i)
			outs[i], errs[i] = tool.Call(context.Background(), prog)
		})
	}
	wg.Wait()
	for i := range 16 {
		require.NoError(t, errs[i])
		assert.Equal(t, fmt.Sprintf("worker %d\n%d", i, i*1000), outs[i])
	}
}

func TestContextCancellationStopsAProgramPromptly(t *testing.T) {
	tool := code.New(code.Config{MaxSteps: 1 << 62, Timeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := tool.Call(ctx, "while True:\n    pass")
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, tools.ErrBadInput)
	assert.Less(t, time.Since(start), 2*time.Second)

	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = tool.Call(ctx, "while True:\n    pass")
	require.ErrorIs(t, err, context.DeadlineExceeded)

	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	_, err = tool.Call(done, "1")
	require.ErrorIs(t, err, context.Canceled)
}

func TestRegistryRunsTheTool(t *testing.T) {
	reg, err := tools.NewRegistry([]tools.Tool{code.New(code.Config{})})
	require.NoError(t, err)
	out, err := reg.Call(context.Background(), "Code", `{"code": "print(sum([1, 2, 3]))"}`)
	require.NoError(t, err)
	assert.Equal(t, "6", out)
	info := reg.Infos()[0]
	assert.True(t, info.Meta.ReadOnly)
	assert.Equal(t, "code", info.Name)
}
