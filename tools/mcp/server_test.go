package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverEnv makes the test binary serve the test MCP server on
// stdin/stdout instead of running the tests: "1" serves, "exit" fails at
// startup as a misconfigured server does.
const serverEnv = "PLANNER_MCP_TEST_SERVER"

// failIfEnv names a file whose existence makes the test server fail at
// startup, as one whose configuration broke does.
const failIfEnv = "PLANNER_MCP_TEST_FAIL_IF"

func TestMain(m *testing.M) {
	switch os.Getenv(serverEnv) {
	case "":
		os.Exit(m.Run())
	case "exit":
		fmt.Fprintln(os.Stderr, "test server: bad configuration: missing API token")
		os.Exit(2)
	default:
		if f := os.Getenv(failIfEnv); f != "" {
			if _, err := os.Stat(f); err == nil {
				fmt.Fprintln(os.Stderr, "test server: bad configuration: the failure marker exists")
				os.Exit(2)
			}
		}
		err := newTestServer(true).Run(context.Background(), &gomcp.StdioTransport{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// testToolNames lists the tools of the test server; crash and spawn
// exist only in the stdio server.
func testToolNames(stdio bool) []string {
	names := []string{"echo", "add", "fail", "slow", "inflight", "env", "pid", "cwd", "peek", "media", "structured"}
	if stdio {
		names = append(names, "crash", "spawn", "hangup", "stubborn")
	}
	return names
}

// newTestServer returns an MCP server with the tools the tests call. It
// lists two tools per page, so that clients must follow cursors.
func newTestServer(stdio bool) *gomcp.Server {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "planner-test", Version: "1"}, &gomcp.ServerOptions{PageSize: 2})
	type none struct{}
	text := func(s string) *gomcp.CallToolResult {
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: s}}}
	}

	type echoIn struct {
		Text string `json:"text" jsonschema:"the text to echo"`
	}
	gomcp.AddTool(s, &gomcp.Tool{Name: "echo", Description: "Echoes its text."},
		func(_ context.Context, _ *gomcp.CallToolRequest, in echoIn) (*gomcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})

	type addIn struct {
		A float64 `json:"a" jsonschema:"the first number"`
		B float64 `json:"b" jsonschema:"the second number"`
	}
	gomcp.AddTool(s, &gomcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(_ context.Context, _ *gomcp.CallToolRequest, in addIn) (*gomcp.CallToolResult, any, error) {
			return text(strconv.FormatFloat(in.A+in.B, 'g', -1, 64)), nil, nil
		})

	gomcp.AddTool(s, &gomcp.Tool{Name: "fail", Description: "Always fails."},
		func(context.Context, *gomcp.CallToolRequest, none) (*gomcp.CallToolResult, any, error) {
			return nil, nil, errors.New("the fail tool always fails")
		})

	var inflight atomic.Int64
	type slowIn struct {
		Seconds float64 `json:"seconds" jsonschema:"how long to sleep"`
	}
	gomcp.AddTool(s, &gomcp.Tool{Name: "slow", Description: "Sleeps, then answers done."},
		func(ctx context.Context, _ *gomcp.CallToolRequest, in slowIn) (*gomcp.CallToolResult, any, error) {
			inflight.Add(1)
			defer inflight.Add(-1)
			select {
			case <-time.After(time.Duration(in.Seconds * float64(time.Second))):
				return text("done"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "inflight", Description: "How many slow calls are running."},
		func(context.Context, *gomcp.CallToolRequest, none) (*gomcp.CallToolResult, any, error) {
			return text(strconv.FormatInt(inflight.Load(), 10)), nil, nil
		})

	type envIn struct {
		Name string `json:"name" jsonschema:"the variable's name"`
	}
	gomcp.AddTool(s, &gomcp.Tool{Name: "env", Description: "An environment variable of the server."},
		func(_ context.Context, _ *gomcp.CallToolRequest, in envIn) (*gomcp.CallToolResult, any, error) {
			return text(os.Getenv(in.Name)), nil, nil
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "pid", Description: "The server's process id."},
		func(context.Context, *gomcp.CallToolRequest, none) (*gomcp.CallToolResult, any, error) {
			return text(strconv.Itoa(os.Getpid())), nil, nil
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "cwd", Description: "The server's working directory."},
		func(context.Context, *gomcp.CallToolRequest, none) (*gomcp.CallToolResult, any, error) {
			wd, err := os.Getwd()
			return text(wd), nil, err
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "peek", Title: "Peek", Annotations: &gomcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *gomcp.CallToolRequest, none) (*gomcp.CallToolResult, any, error) {
			return text("peeked"), nil, nil
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "media", Description: "Returns one content part of each kind."},
		func(context.Context, *gomcp.CallToolRequest, none) (*gomcp.CallToolResult, any, error) {
			return &gomcp.CallToolResult{Content: []gomcp.Content{
				&gomcp.TextContent{Text: "caption"},
				&gomcp.ImageContent{MIMEType: "image/png", Data: []byte{1, 2, 3, 4}},
				&gomcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 10)},
				&gomcp.EmbeddedResource{Resource: &gomcp.ResourceContents{URI: "file:///notes.txt", Text: "embedded notes"}},
				&gomcp.EmbeddedResource{Resource: &gomcp.ResourceContents{URI: "file:///blob.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2}}},
			}}, nil, nil
		})
	s.AddTool(&gomcp.Tool{Name: "structured", Description: "Answers with structured content only.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
			return &gomcp.CallToolResult{StructuredContent: map[string]any{"answer": 42}}, nil
		})

	if !stdio {
		return s
	}
	gomcp.AddTool(s, &gomcp.Tool{Name: "crash", Description: "Exits the server process."},
		func(context.Context, *gomcp.CallToolRequest, none) (*gomcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "test server: crashing now")
			os.Exit(3)
			return nil, nil, nil
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "hangup", Description: "Closes the server's stdout and stays up."},
		func(context.Context, *gomcp.CallToolRequest, none) (*gomcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "test server: hanging up")
			_ = os.Stdout.Close()
			select {}
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "stubborn", Description: "Ignores SIGTERM, closes the server's stdout and stays up."},
		func(context.Context, *gomcp.CallToolRequest, none) (*gomcp.CallToolResult, any, error) {
			signal.Ignore(syscall.SIGTERM)
			fmt.Fprintln(os.Stderr, "test server: ignoring SIGTERM")
			_ = os.Stdout.Close()
			select {}
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "spawn", Description: "Starts a long sleep and returns its pid."},
		func(context.Context, *gomcp.CallToolRequest, none) (*gomcp.CallToolResult, any, error) {
			cmd := exec.Command("sleep", "300")
			if err := cmd.Start(); err != nil {
				return nil, nil, err
			}
			go func() { _ = cmd.Wait() }()
			return text(strconv.Itoa(cmd.Process.Pid)), nil, nil
		})
	return s
}
