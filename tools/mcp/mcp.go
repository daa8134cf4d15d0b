// Package mcp connects to a Model Context Protocol server and offers its
// tools as planner tools.
//
// A server is either a local command spoken to over stdin/stdout (stdio)
// or a streamable-HTTP endpoint. Connect starts (or dials) the server
// once, initializes the MCP session and lists the server's tools; the
// returned Client's Tools are shared by every run of a pipeline (the SDK's
// ClientSession is safe for concurrent calls). A stdio server runs in its
// own process group with a minimal environment, so provider API keys in
// planner's environment never reach it, and Close stops the whole group.
//
// When the server dies (its process exits, the connection is lost), the
// calls in flight fail with ErrServerDown and the next call starts it
// again, a bounded number of times (Config.MaxRestarts). The error says
// how a stdio server ended and wraps an *ExitError with the same: its
// exit status, or the signal that ended it and whether planner sent that
// signal (and why: "its connection broke (EOF)", "the client was
// closed") or it came from elsewhere (the kernel's out-of-memory killer),
// and the end of its standard error.
//
// Tool errors are written for the model that reads them: a result the
// server marks isError is an error wrapping ErrToolError with the server's
// text, and input that is neither a JSON object of arguments nor plain
// text for the tool's single argument is an error wrapping
// tools.ErrBadInput that says which arguments the tool takes.
package mcp

import (
	"errors"
	"io"
	"net/http"
	"runtime"
	"time"
)

// Sentinel errors. Errors returned by this package wrap one of them (or
// tools.ErrBadInput, tools.ErrToolTimeout, tools.ErrUnknownTool, or the
// caller's context error) so that callers can test them with errors.Is.
var (
	// ErrConfig means the Config is invalid; the error is a *ConfigError
	// naming the field.
	ErrConfig = errors.New("invalid MCP server settings")
	// ErrStartup means the server could not be started: the command was
	// not found, the process exited, or it did not answer the MCP
	// handshake or the tool listing within the startup timeout.
	ErrStartup = errors.New("MCP server failed to start")
	// ErrServerDown means the server died or the connection to it was
	// lost; the call did not complete. The next call starts the server
	// again unless the restart budget is spent.
	ErrServerDown = errors.New("MCP server is down")
	// ErrToolError means the server ran the tool and reported an error
	// (a result with isError set), or rejected the call with a protocol
	// error.
	ErrToolError = errors.New("tool reported an error")
	// ErrClosed means the client was closed.
	ErrClosed = errors.New("MCP client is closed")
)

// Defaults of Config's optional fields.
const (
	// DefaultStartupTimeout bounds starting the server, the MCP handshake
	// and the tool listing.
	DefaultStartupTimeout = 30 * time.Second
	// DefaultCallTimeout bounds one tool call.
	DefaultCallTimeout = 60 * time.Second
	// DefaultMaxRestarts is how many times a dead server is started
	// again over the Client's lifetime.
	DefaultMaxRestarts = 3
	// DefaultKillGrace is how long Close waits after SIGTERM before it
	// sends SIGKILL to the server's process group.
	DefaultKillGrace = 2 * time.Second
	// StderrTailSize is how many bytes of a stdio server's standard error
	// are kept for error messages.
	StderrTailSize = 8 << 10
)

// Config describes an MCP server and which of its tools to offer. Exactly
// one of Command and URL must be set; every other field is optional.
type Config struct {
	// Name labels the server in error messages. Default: derived from
	// the command (the package a launcher such as npx or uvx runs, or
	// the program's base name) or the URL's host.
	Name string

	// Command is the argv of a stdio server, such as
	// {"npx", "-y", "@modelcontextprotocol/server-filesystem", "./docs"}.
	// A relative program path with a separator is relative to Dir.
	Command []string
	// Env holds extra environment variables for a stdio server. They
	// override inherited ones.
	Env map[string]string
	// InheritEnv passes planner's whole environment to a stdio server.
	// Default false: the server gets only the variables named by
	// DefaultEnvKeys (PATH, HOME, USER, ...) plus Env, so secrets such
	// as provider API keys never leak to it.
	InheritEnv bool
	// Dir is the working directory of a stdio server. Default: planner's
	// working directory.
	Dir string
	// Stderr, when set, receives a copy of a stdio server's standard
	// error. The last StderrTailSize bytes are always kept for error
	// messages.
	Stderr io.Writer

	// URL is the endpoint of a streamable-HTTP server.
	URL string
	// Headers are sent with every HTTP request to URL. "${NAME}" in a
	// value is replaced by the environment variable NAME (an unset
	// variable is an error), so tokens need not be written in the
	// pipeline file.
	Headers map[string]string
	// HTTPClient sends the HTTP requests. Default: a client without
	// overall timeout (call timeouts apply per call).
	HTTPClient *http.Client

	// Include lists the server tools to offer, by the server's names.
	// Default: all. A name the server does not have is an error that
	// lists the server's tools.
	Include []string
	// Exclude lists server tools not to offer. A name the server does
	// not have is an error too, so that a misspelt name cannot leave a
	// tool visible.
	Exclude []string
	// Prefix is prepended to every tool name ("fs_" turns read_file into
	// fs_read_file). Characters other than letters, digits, '_' and '-'
	// in the resulting names become '_', as model APIs require.
	Prefix string

	// StartupTimeout bounds starting the server, the MCP handshake and
	// the tool listing. Default DefaultStartupTimeout (30s).
	StartupTimeout time.Duration
	// CallTimeout bounds one tool call; it is also the tools'
	// Meta.Timeout. Default DefaultCallTimeout (60s).
	CallTimeout time.Duration
	// MaxRestarts is how many times a dead server is started again over
	// the Client's lifetime. 0 means DefaultMaxRestarts (3); negative
	// means never.
	MaxRestarts int
	// KillGrace is how long Close waits for a stdio server to exit after
	// SIGTERM before it sends SIGKILL. Default DefaultKillGrace (2s).
	KillGrace time.Duration
}

// ConfigError reports an invalid Config field. It wraps ErrConfig and Err.
type ConfigError struct {
	// Field is the settings key of the field at fault: "command", "url",
	// "headers", "include", "exclude", "cwd", ...
	Field string
	// Err says what is wrong.
	Err error
}

// Error implements error.
func (e *ConfigError) Error() string {
	return ErrConfig.Error() + ": " + e.Field + ": " + e.Err.Error()
}

// Unwrap returns ErrConfig and the cause.
func (e *ConfigError) Unwrap() []error { return []error{ErrConfig, e.Err} }

// DefaultEnvKeys returns the names of the environment variables a stdio
// server inherits when Config.InheritEnv is false, as the MCP reference
// clients choose them: what a program needs to find executables, its home
// and its locale, and nothing that usually holds a secret.
func DefaultEnvKeys() []string {
	if runtime.GOOS == "windows" {
		return []string{"APPDATA", "COMSPEC", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT",
			"PROCESSOR_ARCHITECTURE", "PROGRAMFILES", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE"}
	}
	return []string{"HOME", "LANG", "LC_ALL", "LC_CTYPE", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "TZ", "USER"}
}
