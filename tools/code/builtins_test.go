package code_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/planner-engine/planner/tools/code"
)

func TestPythonBuiltins(t *testing.T) {
	tests := []struct {
		program, want string
	}{
		{"sum([1, 2, 3]), sum([0.5, 0.25]), sum([], 10), sum(range(101)), sum([[1], [2]], [])", "(6, 0.75, 10, 5050, [1, 2])"},
		{"round(2.675, 2), round(2.5), round(3.5), round(-2.5), round(1234.5678, 2)", "(2.67, 2, 4, -2, 1234.57)"},
		{"round(1234, -2), round(1250, -2), round(1350, -2), round(-1250, -2), round(5), round(1250.0, -2)", "(1200, 1200, 1400, -1200, 5, 1200.0)"},
		{"pow(2, 10), pow(2, -1), pow(2.0, 3), pow(3, 4, 5), pow(3, -1, 7), pow(2, 3, -5), pow(0, 0)", "(1024, 0.5, 8.0, 1, 5, -2, 1)"},
		{"divmod(7, 2), divmod(-7, 2), divmod(7.5, 2)", "((3, 1), (-4, 1), (3.0, 1.5))"},
		{"map(lambda x: x * 2, [1, 2, 3]), map(lambda a, b: a + b, [1, 2], [10, 20, 30]), list(map(str, range(3)))", "([2, 4, 6], [11, 22], [\"0\", \"1\", \"2\"])"},
		{"filter(None, [0, 1, '', 'a']), filter(lambda x: x % 2, range(6))", "([1, \"a\"], [1, 3, 5])"},
		{"hex(255), hex(-255), bin(5), oct(8), hex(pow(2, 70))", "(\"0xff\", \"-0xff\", \"0b101\", \"0o10\", \"0x400000000000000000\")"},
		{"math.factorial(5), math.gcd(12, 18), math.gcd(), math.gcd(-4, 6)", "(120, 6, 0, 2)"},
		{"math.isnan(math.nan), math.isinf(-math.inf), math.isfinite(1), math.isfinite(math.inf), math.log2(8), math.log10(1000)", "(True, True, True, False, 3.0, 3.0)"},
		{"math.floor(-1.5), math.ceil(1.2), math.pi > 3.14, math.pow(2, 0.5) == math.sqrt(2)", "(-2, 2, True, True)"},
		{"json.decode('[1, {\"a\": null}]'), json.encode_indent({'a': [1]}, indent='  ')", "([1, {\"a\": None}], \"{\\n  \\\"a\\\": [\\n    1\\n  ]\\n}\")"},
		{"json.indent('{\"a\":1}')", "\"{\\n\\t\\\"a\\\": 1\\n}\""},
		{"int('42'), int('ff', 16), int(3.9), str(12), repr('a'), str([1, 'a'])", "(42, 255, 3, \"12\", \"\\\"a\\\"\", \"[1, \\\"a\\\"]\")"},
		{"getattr('a-b', 'replace')('-', '+'), getattr([], 'nope', 5), getattr('x', 'join', 'd') != 'd'", "(\"a+b\", 5, True)"},
		{"sorted([3, 1, 2]), list(reversed([1, 2])), enumerate(['a']), zip([1], [2]), min(3, 1), max([1, 5]), any([0, 1]), all([])", "([1, 2, 3], [2, 1], [(0, \"a\")], [(1, 2)], 1, 5, True, True)"},
		{"set([1]) | set([2]), {'a': 1} | {'b': 2}, tuple([1]), dict(a=1)", "(set([1, 2]), {\"a\": 1, \"b\": 2}, (1,), {\"a\": 1})"},
		{"s = set([1])\ns.update([2, 3])\nsorted(s.union([4])), 'x'.join(['a', 'b']), [1].extend([2])", "([1, 2, 3, 4], \"axb\", None)"},
	}
	tool := code.New(code.Config{})
	for _, tc := range tests {
		t.Run(tc.program, func(t *testing.T) {
			got, err := tool.Call(context.Background(), tc.program)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestBuiltinErrors(t *testing.T) {
	tests := []struct {
		program, msg string
	}{
		{"pow(2, 3, 0)", "modulus must not be 0"},
		{"pow(2, -1, 4)", "not invertible"},
		{"pow('a', 2)", "want numbers"},
		{"round('a')", "want int or float"},
		{"round(float('nan'))", "cannot convert"},
		{"map(len)", "at least one iterable"},
		{"map(len, 5)", "not iterable"},
		{"math.factorial(-1)", "negative"},
		{"math.gcd(1.5)", "want int"},
		{"hex(1.5)", "hex"},
		{"sum(5)", "sum"},
		{"print('a', file=None)", "file"},
	}
	tool := code.New(code.Config{})
	for _, tc := range tests {
		t.Run(tc.program, func(t *testing.T) {
			_, err := tool.Call(context.Background(), tc.program)
			require.ErrorIs(t, err, code.ErrRuntime)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}
