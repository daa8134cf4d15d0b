package main

import (
	"fmt"

	"github.com/planner-engine/planner/internal/schema"
	"github.com/spf13/cobra"
)

// newSchemaCmd builds 'planner schema': the JSON Schema of the pipeline
// YAML on stdout, for editors.
func newSchemaCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the pipeline YAML, for editors",
		Long: `Print the JSON Schema (draft 2020-12) of pipeline files: every top-level block, and each node
type's settings with their descriptions and defaults; unknown keys are errors, as when a pipeline
loads. It is generated from the types the loader decodes; docs/pipeline.schema.json holds a copy,
which the shipped configs name on their first line for editors with a YAML language server
(# yaml-language-server: $schema=../docs/pipeline.schema.json). See docs/pipelines-yaml.md.`,
		Example: `  planner schema`,
		Args:    exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			out, err := schema.Generate()
			if err != nil {
				return fmt.Errorf("schema: %w", err)
			}
			_, err = c.OutOrStdout().Write(out)
			return err
		},
	}
}
