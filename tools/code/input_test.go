package code_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/planner-engine/planner/tools/code"
)

func TestProgramExtractsTheCode(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"plain", "x = 1\nx", "x = 1\nx"},
		{"surrounding blank lines", "\n\nx = 1\n\n", "x = 1"},
		{"JSON code field", `{"code": "print(1)\nprint(2)"}`, "print(1)\nprint(2)"},
		{"JSON input field", `{"input": "print(1)"}`, "print(1)"},
		{"JSON code field wins", `{"input": "a", "code": "b"}`, "b"},
		{"dict literal stays code", `{"a": 1}`, `{"a": 1}`},
		{"dict literal with a string value stays code", `{"name": "x"}`, `{"name": "x"}`},
		{"invalid JSON stays code", `{1: 2}`, `{1: 2}`},
		{"fence with tag", "```python\nx = 1\n```", "x = 1"},
		{"fence with tag and spaces", "  ```Python  \nx = 1\n```  ", "x = 1"},
		{"fence without tag", "```\nx = 1\n```", "x = 1"},
		{"one-line fence", "```x = 1```", "x = 1"},
		{"prose around a fence", "Let me compute:\n```py\nx = 1\n```\nDone.", "x = 1"},
		{"first of two fences", "```python\na = 1\n```\ntext\n```python\nb = 2\n```", "a = 1"},
		{"single backquotes", "`len([1, 2])`", "len([1, 2])"},
		{"common indentation", "    if True:\n        x = 1\n    x", "if True:\n    x = 1\nx"},
		{"indentation after a trimmed first line", "x = 1\n    y = 2\n    print(x + y)", "x = 1\ny = 2\nprint(x + y)"},
		{"a block after a trimmed first line keeps its indentation", "def f():\n    return 1", "def f():\n    return 1"},
		{"CRLF", "a = 1\r\nb = 2\r\n", "a = 1\nb = 2"},
		{"tabs kept inside lines", "s = 'a\tb'", "s = 'a\tb'"},
		{"a fence inside a string is code", "md = '''\n```python\nx = 1\n```\n'''\nmd", "md = '''\n```python\nx = 1\n```\n'''\nmd"},
		{"indentation inside a string is kept", "s = \"\"\"a\n    b\"\"\"\ns", "s = \"\"\"a\n    b\"\"\"\ns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, code.Program(tc.input))
		})
	}
}
