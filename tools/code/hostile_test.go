package code_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/code"
)

// TestHostilePrograms runs programs that try to escape, hang or exhaust
// the interpreter; each must fail with the right sentinel and a message
// that tells a model what went wrong.
func TestHostilePrograms(t *testing.T) {
	// The time limit is long wherever another limit must stop the
	// program, so that a loaded machine cannot change which one does.
	def := code.Config{Timeout: time.Minute}
	small := code.Config{MaxSteps: 200_000, Timeout: time.Minute}
	// tiny keeps the doubling tests cheap: 64 KiB strings, 4 Ki elements.
	tiny := code.Config{MaxValueSize: 64 << 10, Timeout: time.Minute}
	tests := []struct {
		name    string
		cfg     code.Config
		program string
		want    error
		msg     []string // substrings of the error's first line
	}{
		{"endless loop", small, "while True:\n    pass", code.ErrStepLimit,
			[]string{"at line 1", "200,000 steps", "endless loop", "(line 1: while True:)"}},
		{"endless loop in a function", small, "def spin():\n    while True:\n        x = 1\nspin()", code.ErrStepLimit,
			[]string{"in spin (called from line 4)", "step limit"}},
		{"endless print", code.Config{MaxSteps: 100_000, MaxOutput: 100, Timeout: time.Minute}, "while True:\n    print('spam')", code.ErrStepLimit,
			[]string{"step limit", `printed before: "spam\nspam`}},
		{"endless loop without a step limit", code.Config{MaxSteps: 1 << 62, Timeout: 100 * time.Millisecond}, "while True:\n    pass", code.ErrTimeLimit,
			[]string{"100ms (the time limit)"}},
		{"endless sum", code.Config{MaxSteps: 20_000, Timeout: time.Minute}, "sum(range(1000000000000))", code.ErrStepLimit, []string{"step limit"}},
		{"endless map", small, "map(lambda x: x, range(1000000000000))", code.ErrValueTooLarge, []string{"elements, over the limit"}},
		{"deep recursion", def, "def f(n):\n    return f(n + 1)\nf(0)", code.ErrDepthLimit,
			[]string{"maximum recursion depth exceeded at line 2 in f", "1000 deep", "use a loop"}},
		{"mutual recursion", code.Config{MaxDepth: 50, Timeout: time.Minute}, "def a(n):\n    return b(n)\ndef b(n):\n    return a(n)\na(0)", code.ErrDepthLimit,
			[]string{"50 deep"}},
		{"huge string repetition", def, "'x' * pow(10, 10)", code.ErrValueTooLarge,
			[]string{"the repeated string would be 10,000,000,000 bytes long, over the limit of 16 MiB", "(line 1:"}},
		{"huge list repetition", def, "[0] * pow(10, 9)", code.ErrValueTooLarge, []string{"1,000,000,000 elements"}},
		{"repetition the other way round", def, "pow(10, 9) * 'ab'", code.ErrValueTooLarge, []string{"repeated string"}},
		{"string doubling", tiny, "s = 'x'\nfor i in range(64):\n    s += s", code.ErrValueTooLarge,
			[]string{"at line 3", "joined string"}},
		{"string doubling by concatenation", tiny, "s = 'x'\nfor i in range(64):\n    s = s + s", code.ErrValueTooLarge, nil},
		{"list doubling", tiny, "a = [0]\nfor i in range(64):\n    a += a", code.ErrValueTooLarge, []string{"the list would have"}},
		{"list doubling by extend", tiny, "a = [0]\nfor i in range(64):\n    a.extend(a)", code.ErrValueTooLarge, []string{"extend:"}},
		{"string doubling by join", tiny, "s = 'x'\nfor i in range(64):\n    s = ''.join([s, s])", code.ErrValueTooLarge, []string{"join:"}},
		{"string doubling by format", tiny, "s = 'x'\nfor i in range(64):\n    s = '{}{}'.format(s, s)", code.ErrValueTooLarge, []string{"format:"}},
		{"string doubling by %", tiny, "s = 'x'\nfor i in range(64):\n    s = '%s%s' % (s, s)", code.ErrValueTooLarge, nil},
		{"string squaring by replace", def, "s = 'a' * 100000\ns.replace('a', s)", code.ErrValueTooLarge, []string{"replace:"}},
		{"replace through getattr", def, "s = 'a' * 100000\ngetattr(s, 'replace')('a', s)", code.ErrValueTooLarge, nil},
		{"integer squaring", def, "x = 3\nfor i in range(64):\n    x = x * x", code.ErrValueTooLarge, []string{"decimal digits"}},
		{"integer shifting", def, "x = pow(2, 1048000)\nfor i in range(100):\n    x = x << 500", code.ErrValueTooLarge, []string{"shifted integer"}},
		{"huge pow", def, "pow(3, pow(10, 9))", code.ErrValueTooLarge, nil},
		{"huge factorial", def, "math.factorial(10000000)", code.ErrValueTooLarge, nil},
		{"materialised huge range", def, "list(range(pow(10, 9)))", code.ErrValueTooLarge, []string{"1,000,000,000 elements"}},
		{"max over a huge range", def, "max(range(pow(10, 12)))", code.ErrValueTooLarge, nil},
		{"rendering a self-similar value", tiny, "a = [0] * 4000\nb = [a] * 4000\nstr(b)", code.ErrValueTooLarge,
			[]string{"over the limit of 64 KiB"}},
		{"encoding a self-similar value", tiny, "a = [0] * 4000\nb = [a] * 4000\njson.encode(b)", code.ErrValueTooLarge, []string{"json.encode"}},
		{"deeply nested JSON", def, "json.decode('[' * 100000 + ']' * 100000)", code.ErrValueTooLarge, []string{"nests more than"}},
		{"parsing a huge integer", def, "int('9' * 1000000)", code.ErrValueTooLarge, []string{"int:"}},
		{"load", def, "load('os', 'system')\nsystem('ls')", code.ErrSyntax,
			[]string{"load() is not available", "line 1"}},
		{"import", def, "import os\nos.system('ls')", code.ErrSyntax,
			[]string{"syntax error at line 1, column 1", "(line 1: import os)", "hint: there are no imports"}},
		{"from import", def, "from subprocess import run", code.ErrSyntax, []string{"hint: there are no imports"}},
		{"open a file", def, "open('/etc/passwd').read()", code.ErrSyntax, []string{"undefined: open", "no file access"}},
		{"os module", def, "os.environ['HOME']", code.ErrSyntax, []string{"undefined: os", "no OS, file or network access"}},
		{"dunder import", def, "__import__('os')", code.ErrSyntax, []string{"undefined: __import__"}},
		{"eval", def, "eval('1')", code.ErrSyntax, []string{"undefined: eval"}},
		{"network", def, "requests.get('http://example.com')", code.ErrSyntax, []string{"no network access"}},
		{"clock", def, "time.now()", code.ErrSyntax, []string{"undefined: time", "no clock"}},
		{"hidden guard names cannot be written", def, "$add(1, 2)", code.ErrSyntax, nil},
		{"syntax error", def, "x = (1 +\nprint(x)", code.ErrSyntax, []string{"syntax error at line 2"}},
		{"power operator", def, "2 ** 10", code.ErrSyntax, []string{"line 1", "use pow(x, y)"}},
		{"f-string", def, "name = 'x'\nprint(f'hi {name}')", code.ErrSyntax, []string{"line 2", "f-strings are not supported"}},
		{"class", def, "class A:\n    pass", code.ErrSyntax, []string{"classes are not supported"}},
		{"try", def, "try:\n    x = 1\nexcept:\n    pass", code.ErrSyntax, []string{"exceptions are not supported"}},
		{"is", def, "x = None\nx is None", code.ErrSyntax, []string{"no is operator"}},
		{"assert", def, "assert 1 == 1", code.ErrSyntax, []string{"assert is not supported"}},
		{"division by zero", def, "x = 1\ny = 0\nprint('before')\nx / y", code.ErrRuntime,
			[]string{"error at line 4: floating-point division by zero (line 4: x / y)", `printed before the error: "before\n"`}},
		{"error in a function", def, "def f(d):\n    return d['missing']\nf({})", code.ErrRuntime,
			[]string{"error at line 2 in f (called from line 3)", `key "missing" not in dict`, "hint: use d.get"}},
		{"string is not iterable", def, "for c in 'abc':\n    pass", code.ErrRuntime, []string{"use s.elems()"}},
		{"type error", def, "'a' + 1", code.ErrRuntime, []string{"unknown binary op: string + int", "str(n)"}},
		{"fail", def, "fail('custom failure', 42)", code.ErrRuntime, []string{"fail: custom failure 42"}},
		{"oversized source", code.Config{MaxSource: 100, Timeout: time.Minute}, "x = 1\n" + strings.Repeat("# padding\n", 20), code.ErrSourceTooLarge,
			[]string{"over the limit of 100 bytes"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tool := code.New(tc.cfg)
			start := time.Now()
			out, err := tool.Call(context.Background(), tc.program)
			require.Error(t, err, "output: %q", out)
			if tc.want == code.ErrTimeLimit {
				assert.Less(t, time.Since(start), tool.Config().Timeout+time.Second)
			}
			require.ErrorIs(t, err, tc.want, "%v", err)
			require.ErrorIs(t, err, tools.ErrBadInput)
			var ce *code.Error
			require.ErrorAs(t, err, &ce)
			first, _, _ := strings.Cut(err.Error(), "\n")
			assert.Equal(t, ce.Msg, first)
			assert.LessOrEqual(t, len(first), 1200)
			for _, m := range tc.msg {
				assert.Contains(t, first, m)
			}
		})
	}
}

func TestDefaultLimitsEndAnEndlessLoopInTime(t *testing.T) {
	tool := code.New(code.Config{})
	start := time.Now()
	_, err := tool.Call(context.Background(), "i = 0\nwhile True:\n    i += 1")
	require.Error(t, err)
	assert.True(t, errors.Is(err, code.ErrStepLimit) || errors.Is(err, code.ErrTimeLimit), "%v", err)
	assert.Less(t, time.Since(start), code.DefaultTimeout+time.Second)
}

func TestMemoryWatchdogStopsGradualGrowth(t *testing.T) {
	// Each string is within the value limit; together they are not.
	tool := code.New(code.Config{MaxMemory: 32 << 20, Timeout: time.Minute})
	_, err := tool.Call(context.Background(), "keep = []\nfor i in range(300):\n    keep.append('x' * 1000000 + str(i))\nlen(keep)")
	require.ErrorIs(t, err, code.ErrMemoryLimit)
	assert.Contains(t, err.Error(), "more than 32 MiB of memory")
}

func TestErrorCarriesTracebackAndOutput(t *testing.T) {
	_, err := code.New(code.Config{}).Call(context.Background(), "def inner(x):\n    return 10 // x\n\ndef outer():\n    print('start')\n    return inner(0)\n\nouter()")
	var ce *code.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 2, ce.Line)
	assert.Equal(t, "start\n", ce.Output)
	assert.Equal(t, "Traceback (most recent call last):\n"+
		"  line 8, in <toplevel>: outer()\n"+
		"  line 6, in outer: return inner(0)\n"+
		"  line 2, in inner: return 10 // x", ce.Traceback)
	assert.Contains(t, err.Error(), "\nprinted before the error:\nstart\n")
}

func TestRecursionTracebackIsCompressed(t *testing.T) {
	_, err := code.New(code.Config{MaxDepth: 100, Timeout: time.Minute}).Call(context.Background(), "def f(n):\n    return f(n + 1)\nf(0)")
	var ce *code.Error
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Msg, "(called from line 2 (")
	assert.Contains(t, ce.Traceback, "[previous line repeated")
	assert.Less(t, strings.Count(ce.Traceback, "\n"), 10)
}
