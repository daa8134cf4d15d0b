package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/tools"
	"github.com/spf13/cobra"
)

func newToolsCmd() *cobra.Command {
	var cfgPath string
	var asJSON bool
	c := &cobra.Command{
		Use:   "tools [--config FILE]",
		Short: "List tools with their descriptions and input schemas",
		Long: `List the tools a pipeline declares (--config), or every built-in tool, with descriptions,
input JSON schemas and metadata (read-only, network, needs approval). A pipeline's MCP servers are
started to list their tools and stopped again. Built-in tools that need settings of their own (files,
sql, mcp) are listed only with --config; serpapi only when its key (SERPAPI_API_KEY) is set.`,
		Example: `  planner tools
  planner tools --config configs/react.yaml --json
  planner tools call calculator "2^10 + sqrt(16)"
  planner tools call code "sum([i*i for i in range(10)])"`,
		Args: exactArgs(0, "no arguments (did you mean 'planner tools call NAME INPUT'?)"),
		RunE: func(c *cobra.Command, _ []string) error {
			reg, closeTools, err := loadTools(c, cfgPath)
			if err != nil {
				return err
			}
			defer closeTools()
			infos := reg.Infos()
			if asJSON {
				enc := json.NewEncoder(c.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(infos)
			}
			for _, in := range infos {
				var flags []string
				if in.Meta.ReadOnly {
					flags = append(flags, "read-only")
				}
				if in.Meta.Network {
					flags = append(flags, "network")
				}
				if in.Meta.NeedsApproval {
					flags = append(flags, "needs approval")
				}
				schema, _ := json.Marshal(in.Schema)
				fmt.Fprintf(c.OutOrStdout(), "%s  [%s]\n  %s\n  input schema: %s\n\n", in.Name, strings.Join(flags, ", "), in.Description, schema)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&cfgPath, "config", "c", "", "pipeline whose tools to list (default: every built-in tool with default settings)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	call := &cobra.Command{
		Use:   "call NAME INPUT [--config FILE]",
		Short: "Run one tool once and print its observation",
		Example: `  planner tools call calculator "123456789*987654321"
  planner tools call search "tallest mountain" --config configs/react.yaml
  planner tools call get_time Asia/Shanghai`,
		Args: exactArgs(2, "a tool name and one input (quote it)"),
		RunE: func(c *cobra.Command, args []string) error {
			reg, closeTools, err := loadTools(c, cfgPath)
			if err != nil {
				return err
			}
			defer closeTools()
			out, err := reg.Call(c.Context(), args[0], args[1])
			if errors.Is(err, tools.ErrUnknownTool) && cfgPath == "" {
				return fmt.Errorf("%w (tools that need settings, such as those of files, sql and mcp entries, are called with --config FILE)", err)
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), out)
			return nil
		},
	}
	call.Flags().StringVarP(&cfgPath, "config", "c", "", "pipeline whose tool settings to use")
	c.AddCommand(call)
	return c
}

// loadTools returns the tools of the pipeline at cfgPath, or every
// built-in tool, and a function that stops what they started (MCP
// servers) and reports a failure to do so on stderr.
func loadTools(c *cobra.Command, cfgPath string) (*tools.Registry, func(), error) {
	a, err := app.New()
	if err != nil {
		return nil, nil, err
	}
	if cfgPath != "" {
		p, err := a.Validate(c.Context(), cfgPath)
		if err != nil {
			return nil, nil, err
		}
		return p.Tools(), func() {
			if err := p.Close(); err != nil {
				fmt.Fprintln(c.ErrOrStderr(), err)
			}
		}, nil
	}
	reg, needSettings, err := a.BuiltinTools(c.Context())
	if err == nil && len(needSettings) > 0 && c.Name() == "tools" {
		fmt.Fprintf(c.ErrOrStderr(), "not listed: %s need settings of their own (a root, a database, a server, an API key); list them with --config FILE\n", strings.Join(needSettings, ", "))
	}
	return reg, func() {}, err
}
