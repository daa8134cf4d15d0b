package code_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/planner-engine/planner/tools/code"
)

func ExampleTool_Call() {
	tool := code.New(code.Config{})
	out, err := tool.Call(context.Background(), "```python\n"+
		"primes = [n for n in range(2, 30) if all([n % d for d in range(2, n)])]\n"+
		"print('found', len(primes), 'primes')\n"+
		"'{:.1f}'.format(sum(primes) / len(primes))\n"+
		"```")
	fmt.Println(out, err)

	_, err = tool.Call(context.Background(), "x = 2 ** 10")
	fmt.Println(errors.Is(err, code.ErrSyntax))
	fmt.Println(err)
	// Output:
	// found 10 primes
	// "12.9" <nil>
	// true
	// syntax error at line 1, column 9: got '**', want newline (line 1: x = 2 ** 10); hint: there is no ** operator; use pow(x, y) (or math.pow for floats), and dict(a, **b) to merge dicts
}
