package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/internal/app"
	"github.com/planner-engine/planner/mcpserver"
	"github.com/planner-engine/planner/server"
	"github.com/spf13/cobra"
)

type mcpFlags struct {
	dir, store, llm, root string
}

func newMCPCmd(p process) *cobra.Command {
	f := &mcpFlags{}
	c := &cobra.Command{
		Use:   "mcp [--dir configs] [--store FILE] [--llm SPEC]",
		Short: "Serve the pipelines as the tools of an MCP server over stdio",
		Long: `Serve the pipelines of --dir as the tools of a Model Context Protocol server on stdin and stdout,
for MCP clients (Claude Desktop, editors, agents) that start planner themselves: one tool per
pipeline that loads, named after it, taking a question (and an optional thread name) and returning
the answer, with the run's usage, status and thread as structured content.

A call reports the run's events as progress when the client asks for progress, stops the run when
the client cancels it, and asks the client to approve a tool call that needs approval when the client
supports elicitation; otherwise the call returns the waiting thread, to decide with
planner resume NAME --approve. Every run is a thread of the --store store. Nothing but the protocol
goes to stdout; messages go to stderr. planner serve offers the same tools over HTTP at /mcp.`,
		Example: `  planner mcp --dir configs --llm sim   # needs an MCP client on stdin: it serves until stdin closes`,
		Args:    exactArgs(0, "no arguments"),
		RunE:    func(c *cobra.Command, _ []string) error { return serveMCP(c, p, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.dir, "dir", server.DefaultDir, "folder of the pipeline configs that become tools")
	storeFlag(c, &f.store)
	fl.StringVar(&f.llm, "llm", "", "model of runs (sim, scripted:FILE, openai:gpt-4o-mini); default the pipeline's own")
	fl.StringVar(&f.root, "root", ".", "folder that file paths the runs name must lie in")
	return c
}

// serveMCP serves the MCP server over stdio until the client closes
// stdin or ctx ends.
func serveMCP(c *cobra.Command, p process, f *mcpFlags) error {
	ctx := c.Context()
	demo, err := suite.Demo()
	if err != nil {
		return err
	}
	a, err := app.New(app.WithTasks(demo))
	if err != nil {
		return err
	}
	defer a.Close()
	db, err := storePath(p, f.store)
	if err != nil {
		return err
	}
	srv, err := server.New(server.Config{
		Engine: a.Engine, Dir: f.dir, Root: f.root, StorePath: db, LLM: f.llm,
		CompareLoader: func(_ context.Context, tasks []suite.Task) (compare.Loader, error) {
			return app.New(app.WithTasks(tasks))
		},
	})
	if errors.Is(err, server.ErrConfig) {
		return &usageError{cmd: "mcp", err: err}
	}
	if err != nil {
		return err
	}
	defer srv.Close()
	if len(srv.Pipelines()) == 0 {
		return &usageError{cmd: "mcp", err: fmt.Errorf("no pipeline of --dir %s loads: give --dir a folder of pipeline configs (planner validate checks them)", f.dir)}
	}
	logger := slog.New(slog.NewTextHandler(c.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	s := mcpserver.New(srv, mcpserver.WithVersion(version), mcpserver.WithLogger(logger))
	fmt.Fprintf(c.ErrOrStderr(), "planner: MCP server on stdio: %d tools (threads in %s)\n", len(srv.Pipelines()), db)
	var t mcp.Transport = &mcp.StdioTransport{}
	if p.stdin != nil && p.stdout != nil {
		t = &mcp.IOTransport{Reader: io.NopCloser(p.stdin), Writer: nopWriteCloser{p.stdout}}
	}
	err = s.Run(ctx, t)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// nopWriteCloser is a writer whose Close does nothing: the MCP server
// closing its connection leaves the process's stdout open.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
