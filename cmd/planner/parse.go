package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/planner-engine/planner/executor/parse"
	"github.com/planner-engine/planner/plan"
	"github.com/spf13/cobra"
)

func newParseCmd() *cobra.Command {
	var format string
	var jsonl bool
	c := &cobra.Command{
		Use:   "parse [--format react|react-paper|auto] [--jsonl]",
		Short: "Parse model output from stdin as the ReAct executor would",
		Long: `Read one model output on stdin and print the parse result as one JSON line:
  {"kind":"action","tool":...,"input":...,"thought":...}
  {"kind":"final","answer":...,"thought":...}
  {"kind":"invalid","error":...}
With --jsonl each stdin line is a JSON string (or an object with a "text" field) and each
output line is the parse of that line, in order.`,
		Example: `  printf 'Thought: look it up\nAction: search\nAction Input: Eiffel Tower' | planner parse
  printf 'Thought 1: ...\nAction 1: Search[Apple Remote]' | planner parse --format react-paper
  printf '"Final Answer: 42"\n"Action: search\\nAction Input: Pluto"\n' | planner parse --jsonl`,
		Args: exactArgs(0, "no arguments (the text comes on stdin)"),
		RunE: func(c *cobra.Command, _ []string) error {
			return runParse(c, format, jsonl)
		},
	}
	c.Flags().StringVarP(&format, "format", "f", "auto", "react, react-paper, auto or plan")
	c.Flags().BoolVar(&jsonl, "jsonl", false, "one JSON-encoded output per stdin line")
	return c
}

// parser parses one text into a JSON-encodable value.
type parser func(text string) any

func pickParser(format string) (parser, error) {
	if format == "plan" {
		return func(text string) any {
			steps, err := plan.Parse(text)
			if err == nil {
				err = plan.Rules{}.Check(steps)
			}
			if err != nil {
				return map[string]any{"kind": "invalid", "error": err.Error()}
			}
			return map[string]any{"kind": "plan", "steps": steps}
		}, nil
	}
	f, err := parse.ParseFormat(format)
	if err != nil {
		return nil, err
	}
	return func(text string) any { return parse.Parse(text, parse.WithFormat(f)) }, nil
}

func runParse(c *cobra.Command, format string, jsonl bool) error {
	p, err := pickParser(format)
	if err != nil {
		return &usageError{cmd: "parse", err: err}
	}
	out := bufio.NewWriter(c.OutOrStdout())
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	if !jsonl {
		b, err := io.ReadAll(c.InOrStdin())
		if err != nil {
			return fmt.Errorf("reading stdin: %w", err)
		}
		return enc.Encode(p(string(b)))
	}
	sc := bufio.NewScanner(c.InOrStdin())
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := strings.TrimSpace(sc.Text())
		if raw == "" {
			continue
		}
		text, err := jsonlText(raw)
		if err != nil {
			return &usageError{cmd: "parse", err: fmt.Errorf("stdin line %d: %w", line, err)}
		}
		if err := enc.Encode(p(text)); err != nil {
			return err
		}
	}
	return sc.Err()
}

func jsonlText(raw string) (string, error) {
	var s string
	if err := json.Unmarshal([]byte(raw), &s); err == nil {
		return s, nil
	}
	var obj struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal([]byte(raw), &obj); err != nil || obj.Text == nil {
		return "", errors.New(`want a JSON string or an object with a "text" field`)
	}
	return *obj.Text, nil
}
