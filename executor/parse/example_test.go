package parse_test

import (
	"fmt"

	"github.com/planner-engine/planner/executor/parse"
)

func ExampleParse() {
	reply := "Thought 1: I need to search Milhouse.\n" +
		"Action 1: Search[Milhouse]\n" +
		"Observation 1: Milhouse is a character in The Simpsons.\n" +
		"Action 2: Finish[The Simpsons]"
	r := parse.Parse(reply)
	fmt.Println(r.Kind, r.Tool, r.Input, r.Truncated)
	// Output: action Search Milhouse true
}

func ExampleParse_formatError() {
	r := parse.Parse("Thought: I should check the weather.", parse.WithFormat(parse.FormatReAct))
	fmt.Println(r.Kind)
	fmt.Println(r.Error)
	// Output:
	// invalid
	// Invalid format: no "Action:" or "Final Answer:" found. Reply with "Thought: <your reasoning>" followed either by "Action: <tool name>" and "Action Input: <tool input>" on separate lines to call a tool, or by "Final Answer: <answer>" when you are done.
}

func ExampleNormalizeToolName() {
	fmt.Println(parse.NormalizeToolName("Web_Search"), parse.NormalizeToolName("web-search"))
	// Output: websearch websearch
}
