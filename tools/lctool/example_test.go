package lctool_test

import (
	"context"
	"fmt"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/lctool"
	lctools "github.com/tmc/langchaingo/tools"
)

// A langchaingo tool, here its Starlark calculator, joins a planner
// registry under the name the model should use, with metadata.
func Example() {
	calc := lctool.Wrap(lctools.Calculator{},
		lctool.WithName("lc_calculator"),
		lctool.WithMeta(tools.Meta{ReadOnly: true}))
	reg, err := tools.NewRegistry([]tools.Tool{calc})
	if err != nil {
		panic(err)
	}
	out, err := reg.Call(context.Background(), "lc_calculator", "2 * (3 + 4)")
	if err != nil {
		panic(err)
	}
	in := reg.Infos()[0]
	fmt.Println(in.Name, in.Meta.ReadOnly)
	fmt.Println(in.Description)
	fmt.Println(out)
	// Output:
	// lc_calculator true
	// Useful for getting the result of a math expression. The input to this tool should be a valid mathematical expression that could be executed by a starlark evaluator.
	// 14
}
