package builtin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/mcp"
	"github.com/planner-engine/planner/tools/toolset"
)

// mcpSettings are the settings of an `mcp:` tools entry: one MCP server,
// whose tools become planner tools.
type mcpSettings struct {
	// Command is the argv of a server run as a local process and spoken
	// to over stdin/stdout, e.g. [npx, -y,
	// "@modelcontextprotocol/server-filesystem", ./docs]. Exactly one of
	// command and url.
	Command []string `mapstructure:"command"`
	// URL is the endpoint of a streamable-HTTP server.
	URL string `mapstructure:"url"`
	// Name labels the server in messages. Default: derived from the
	// command (the npx/uvx package or the program) or the URL's host.
	Name string `mapstructure:"name"`
	// Include lists the server's tools to offer. Default: all of them.
	Include []string `mapstructure:"include"`
	// Exclude lists server tools not to offer. Default: none.
	Exclude []string `mapstructure:"exclude"`
	// Prefix is prepended to every tool name, as "fs_". Default none.
	Prefix string `mapstructure:"prefix"`
	// Env holds extra environment variables for a command server.
	Env map[string]string `mapstructure:"env"`
	// InheritEnv passes planner's whole environment to a command server.
	// Default false: only PATH, HOME, USER, LANG, TMPDIR and the like,
	// so API keys do not leak to the server.
	InheritEnv bool `mapstructure:"inherit_env"`
	// Cwd is a command server's working directory, relative to the
	// pipeline's folder. Default: the pipeline's folder.
	Cwd string `mapstructure:"cwd"`
	// Headers are HTTP headers for a url server; ${VAR} in a value is
	// replaced by the environment variable VAR.
	Headers map[string]string `mapstructure:"headers"`
	// StartupTimeout bounds start, MCP handshake and tool listing.
	// Default 30s.
	StartupTimeout time.Duration `mapstructure:"startup_timeout"`
	// CallTimeout bounds one tool call. Default 60s.
	CallTimeout time.Duration `mapstructure:"call_timeout"`
	// MaxRestarts is how many times a server that went down is started
	// again. Default 3; 0 never restarts it.
	MaxRestarts *int `mapstructure:"max_restarts"`
}

// buildMCP starts (or dials) the MCP server of an `mcp:` entry and returns
// its tools. The server is shared by all of them; each is an io.Closer
// whose Close stops it.
func buildMCP(ctx context.Context, settings map[string]any, baseDir string) ([]tools.Tool, error) {
	cfg, err := mcpConfig(settings, baseDir)
	if err != nil {
		return nil, err
	}
	c, err := mcp.Connect(ctx, cfg)
	if err != nil {
		return nil, mcpSettingError(err)
	}
	return c.PlannerTools(), nil
}

// mcpConfig decodes and checks the settings of an `mcp:` entry.
func mcpConfig(settings map[string]any, baseDir string) (mcp.Config, error) {
	if cmd, ok := settings["command"].(string); ok {
		return mcp.Config{}, config.SettingErrorf("command",
			"write the command as a list of words, such as [npx, -y, \"@modelcontextprotocol/server-filesystem\", ./docs], not as the string %q", cmd)
	}
	var s mcpSettings
	if err := config.Decode(settings, &s); err != nil {
		return mcp.Config{}, err
	}
	if len(s.Command) == 0 && s.URL == "" {
		return mcp.Config{}, toolset.RequiredSetting("command", "an MCP server entry needs command: [the server's argv] or url: a streamable-HTTP endpoint")
	}
	switch {
	case s.StartupTimeout < 0:
		return mcp.Config{}, config.SettingErrorf("startup_timeout", "must be positive, got %s", s.StartupTimeout)
	case s.CallTimeout < 0:
		return mcp.Config{}, config.SettingErrorf("call_timeout", "must be positive, got %s", s.CallTimeout)
	case s.MaxRestarts != nil && *s.MaxRestarts < 0:
		return mcp.Config{}, config.SettingErrorf("max_restarts", "must be 0 or more, got %d", *s.MaxRestarts)
	}
	cfg := mcp.Config{
		Name:           s.Name,
		Command:        s.Command,
		Env:            s.Env,
		InheritEnv:     s.InheritEnv,
		URL:            s.URL,
		Headers:        s.Headers,
		Include:        s.Include,
		Exclude:        s.Exclude,
		Prefix:         s.Prefix,
		StartupTimeout: s.StartupTimeout,
		CallTimeout:    s.CallTimeout,
	}
	if s.MaxRestarts != nil {
		cfg.MaxRestarts = *s.MaxRestarts
		if cfg.MaxRestarts == 0 {
			cfg.MaxRestarts = -1 // mcp.Config's zero value means the default
		}
	}
	if len(s.Command) > 0 {
		cfg.Dir = toolset.PipelinePath(s.Cwd, baseDir)
	} else if s.Cwd != "" {
		cfg.Dir = s.Cwd // refused by mcp.Connect: cwd does not apply to url
	}
	return cfg, nil
}

// mcpSettingError turns an invalid mcp.Config into the *config.SettingError
// that names the key at fault; other errors pass unchanged.
func mcpSettingError(err error) error {
	var ce *mcp.ConfigError
	if errors.As(err, &ce) {
		return &config.SettingError{Key: ce.Field, Err: fmt.Errorf("%w: %w", config.ErrSettings, ce.Err)}
	}
	return err
}
