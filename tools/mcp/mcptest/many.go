package mcptest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The words ManyToolName builds tool names from: a system, an action and
// a kind of record, so that a task can match a few tools by their words.
var (
	manySystems = []string{"crm", "billing", "inventory", "payroll", "ticketing", "calendar", "mail", "storage", "analytics", "shipping"}
	manyActions = []string{"get", "list", "create", "update", "delete", "search", "export", "archive", "restore", "count"}
	manyObjects = []string{"contact", "invoice", "order", "employee", "ticket", "event", "message", "file", "report", "parcel"}
)

// ManyToolName returns the name of tool i of a ManyToolsServer, such as
// "crm_get_contact_0" or "shipping_count_parcel_9": a system, an action,
// a kind of record and a shard number, all distinct for i below 10,000
// (and repeating shards above).
func ManyToolName(i int) string {
	return fmt.Sprintf("%s_%s_%s_%d", manySystems[i%10], manyActions[i/10%10], manyObjects[i/100%10], i/1000)
}

// NewManyToolsServer returns an MCP server with n tools named by
// ManyToolName, each described in words of its name ("Gets invoice
// records of the billing system, shard 3.") with one string argument
// "query"; a call answers "<name>: <query>". It lists 1,000 tools a
// page. It stands for the servers that list thousands of tools, so that
// tests can check what reaches a prompt.
func NewManyToolsServer(n int) *gomcp.Server {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "planner-many-tools", Version: "1"}, &gomcp.ServerOptions{PageSize: 1000})
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string", "description": "what to look for"},
		},
	}
	for i := range n {
		name := ManyToolName(i)
		desc := fmt.Sprintf("%s %s records of the %s system, shard %d.", verb(manyActions[i/10%10]), manyObjects[i/100%10], manySystems[i%10], i/1000)
		s.AddTool(&gomcp.Tool{Name: name, Description: desc, InputSchema: schema},
			func(_ context.Context, req *gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
				return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: name + ": " + string(req.Params.Arguments)}}}, nil
			})
	}
	return s
}

// verb turns an action into the verb that begins a description.
func verb(action string) string {
	switch action {
	case "get":
		return "Gets"
	case "list":
		return "Lists"
	case "search":
		return "Searches"
	}
	return string(action[0]-'a'+'A') + action[1:] + "s"
}

// ManyToolsServer serves NewManyToolsServer(n) over streamable HTTP on a
// local port for the rest of the test and returns its URL, for
// mcp.Config.URL. It needs neither npm nor a network.
func ManyToolsServer(t testing.TB, n int) string {
	t.Helper()
	srv := NewManyToolsServer(n)
	hs := httptest.NewServer(gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}
