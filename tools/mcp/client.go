package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/planner-engine/planner/tools"
)

// errStartupTimeout and errCallTimeout are the causes of the contexts that
// bound startup and calls, so that a timeout can be told from a caller's
// cancellation.
var (
	errStartupTimeout = errors.New("startup timeout")
	errCallTimeout    = errors.New("call timeout")
)

// Client is a connection to one MCP server and the planner tools made
// from its tools. It is safe for concurrent use. Close stops the server;
// every Tool's Close does the same.
type Client struct {
	cfg         Config
	label       string // `"name" (command or URL)` for messages
	maxRestarts int
	sdk         *gomcp.Client
	httpClient  *http.Client
	tools       []*Tool

	// life is cancelled by Close; it cancels calls and startups in
	// flight.
	life   context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	cur      *conn    // the current connection; nil only before the first
	all      []*conn  // every connection made, for Close
	attempt  *attempt // the restart in progress, if any
	restarts int
	closed   bool

	watchers  sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// attempt is one restart; callers that find it in progress wait for it.
type attempt struct {
	done chan struct{}
	cn   *conn
	err  error
	// retry is set when the attempt failed only because the caller that
	// made it gave up; a waiter then makes its own.
	retry bool
	// prev is the connection that went down.
	prev *conn
}

// conn is one session with the server (one server process, for stdio).
type conn struct {
	sess  *gomcp.ClientSession
	proc  *process               // nil for HTTP servers
	list  []*gomcp.Tool          // the server's tools, in its order
	tools map[string]*gomcp.Tool // the same, by name

	down     chan struct{} // closed when the connection is known broken
	downOnce sync.Once
	cause    error // why it broke, when known; set before down is closed

	stopOnce sync.Once
	stopErr  error
}

// Connect starts (or, for a URL, dials) the MCP server cfg describes,
// initializes the session and lists the server's tools, all within
// cfg.StartupTimeout; the server's process does not depend on ctx after
// Connect returns. Failures wrap ErrStartup, or ErrConfig (as a
// *ConfigError). The caller must Close the client (or any of its tools).
func Connect(ctx context.Context, cfg Config) (*Client, error) {
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	cn, err := c.start(ctx)
	if err != nil {
		c.cancel(ErrClosed)
		c.watchers.Wait()
		return nil, err
	}
	c.cur, c.all = cn, []*conn{cn}
	ts, err := c.makeTools(cn)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	c.tools = ts
	return c, nil
}

func newClient(cfg Config) (*Client, error) {
	if err := normalize(&cfg); err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, maxRestarts: cfg.MaxRestarts}
	if c.maxRestarts < 0 {
		c.maxRestarts = 0
	}
	where := redactURL(cfg.URL)
	if len(cfg.Command) > 0 {
		where = strings.Join(cfg.Command, " ")
	}
	c.label = fmt.Sprintf("%q (%s)", cfg.Name, where)
	if cfg.URL != "" {
		c.httpClient = httpClient(cfg.HTTPClient, cfg.Headers)
	}
	c.sdk = gomcp.NewClient(&gomcp.Implementation{Name: "planner", Version: "0.1"}, &gomcp.ClientOptions{
		// No roots: planner offers none, and a server such as
		// server-filesystem would otherwise ask for them.
		Capabilities: &gomcp.ClientCapabilities{},
	})
	c.life, c.cancel = context.WithCancelCause(context.Background())
	return c, nil
}

// Name returns the server's label (Config.Name or the derived one).
func (c *Client) Name() string { return c.cfg.Name }

// Tools returns the planner tools made from the server's tools, in the
// server's order. They share the client: closing any of them closes it.
func (c *Client) Tools() []*Tool { return slices.Clone(c.tools) }

// PlannerTools returns Tools as a []tools.Tool, for a tools.Registry.
func (c *Client) PlannerTools() []tools.Tool {
	out := make([]tools.Tool, len(c.tools))
	for i, t := range c.tools {
		out[i] = t
	}
	return out
}

// Restarts reports how many times the server was started again after it
// went down.
func (c *Client) Restarts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.restarts
}

// Close stops the server: it cancels the calls in flight (they fail with
// ErrClosed), closes the session, then, for a stdio server, sends SIGTERM
// to the server's process group, SIGKILL after Config.KillGrace, and waits
// for the server to exit. Close is idempotent and safe for concurrent use;
// later calls fail with ErrClosed.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		a := c.attempt
		c.mu.Unlock()
		c.cancel(ErrClosed)
		if a != nil {
			<-a.done
		}
		c.mu.Lock()
		all := c.all
		c.mu.Unlock()
		var errs []error
		for _, cn := range all {
			if err := cn.shutdown(c.cfg.KillGrace, "the client was closed"); err != nil {
				errs = append(errs, err)
			}
		}
		c.watchers.Wait()
		if len(errs) > 0 {
			c.closeErr = fmt.Errorf("closing MCP server %s: %w", c.label, errors.Join(errs...))
		}
	})
	return c.closeErr
}

// start makes a new connection: it starts the server process (stdio) or
// dials the URL, initializes the session and lists the tools, within the
// startup timeout.
func (c *Client) start(ctx context.Context) (*conn, error) {
	sctx, cancel := context.WithTimeoutCause(ctx, c.cfg.StartupTimeout, errStartupTimeout)
	defer cancel()
	stop := context.AfterFunc(c.life, cancel)
	defer stop()

	if err := sctx.Err(); err != nil {
		return nil, c.startupError(sctx, "start", err, nil)
	}
	var p *process
	var tr gomcp.Transport
	if c.cfg.URL != "" {
		tr = &gomcp.StreamableClientTransport{
			Endpoint:   c.cfg.URL,
			HTTPClient: c.httpClient,
			// Planner sends requests and reads their answers; it has no
			// use for server-initiated messages.
			DisableStandaloneSSE: true,
		}
	} else {
		var err error
		if p, err = startProcess(&c.cfg); err != nil {
			return nil, c.startupError(sctx, "start", err, nil)
		}
		tr = &gomcp.IOTransport{Reader: p.stdout, Writer: p.stdin}
	}
	sess, err := c.sdk.Connect(sctx, tr, nil)
	if err != nil {
		e := c.startupError(sctx, "MCP handshake", err, p)
		if p != nil {
			_ = p.stop(c.cfg.KillGrace, "the MCP handshake failed")
		}
		return nil, e
	}
	cn := &conn{sess: sess, proc: p, down: make(chan struct{})}
	c.watch(cn)
	list, err := listTools(sctx, sess)
	if err != nil {
		e := c.startupError(sctx, "tool listing", err, p)
		_ = cn.shutdown(c.cfg.KillGrace, "the tool listing failed")
		return nil, e
	}
	cn.list = list
	cn.tools = make(map[string]*gomcp.Tool, len(list))
	for _, t := range list {
		cn.tools[t.Name] = t
	}
	return cn, nil
}

// listTools lists every tool of the server, following pagination cursors.
func listTools(ctx context.Context, sess *gomcp.ClientSession) ([]*gomcp.Tool, error) {
	var out []*gomcp.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// startupError describes a failed start: what failed, whether it timed
// out, how the server process ended and the end of its standard error.
func (c *Client) startupError(ctx context.Context, phase string, err error, p *process) error {
	if c.life.Err() != nil {
		return fmt.Errorf("%w: %w", ErrStartup, ErrClosed)
	}
	var b strings.Builder
	var exit *ExitError
	fmt.Fprintf(&b, "%s: server %s: ", ErrStartup.Error(), c.label)
	timedOut := errors.Is(context.Cause(ctx), errStartupTimeout)
	switch {
	case timedOut:
		fmt.Fprintf(&b, "no answer to the %s within %s (startup_timeout)", phase, c.cfg.StartupTimeout)
		if p != nil {
			b.WriteString("; does the command run an MCP server that speaks MCP on stdin/stdout?")
		}
	case ctx.Err() != nil:
		fmt.Fprintf(&b, "%s interrupted: %v", phase, context.Cause(ctx))
		err = context.Cause(ctx)
	case phase == "start":
		fmt.Fprintf(&b, "cannot run the command: %v", err)
	case p != nil && p.waitExit(time.Second):
		exit = p.exitError()
		fmt.Fprintf(&b, "the server %s during the %s", exit.what(), phase)
	default:
		fmt.Fprintf(&b, "%s failed: %v", phase, err)
		if p != nil {
			b.WriteString(" (a stdio server must write only MCP messages to stdout, and its logs to stderr)")
		}
	}
	msg := b.String()
	if p != nil {
		msg = withStderr(msg, p.stderrTail())
	}
	e := &startupErr{msg: msg, err: err}
	if exit != nil {
		e.exit = exit
	}
	return e
}

// startupErr is an ErrStartup error with a message of its own that also
// wraps the underlying cause (exec.ErrNotFound, a context error, ...)
// and, when the server's process exited, its *ExitError.
type startupErr struct {
	msg  string
	err  error
	exit *ExitError
}

func (e *startupErr) Error() string { return e.msg }

func (e *startupErr) Unwrap() []error {
	errs := []error{ErrStartup, e.err}
	if e.exit != nil {
		errs = append(errs, e.exit)
	}
	return errs
}

// downError is an ErrServerDown error with a message of its own that
// also wraps what is known of the cause: the server process's
// *ExitError, the connection's error, a failed restart's error.
type downError struct {
	msg    string
	causes []error
}

func (e *downError) Error() string { return ErrServerDown.Error() + ": " + e.msg }

func (e *downError) Unwrap() []error { return append([]error{ErrServerDown}, e.causes...) }

// exitSettle is how long a stdio server whose connection ended is given
// to exit on its own before planner stops it: a server that dies (a
// crash, a signal from elsewhere) closes its output first, and its exit
// status, not planner's signal, must be what the errors report.
const exitSettle = 250 * time.Millisecond

// watch marks cn down when its session ends or its process exits, and
// then shuts it down.
func (c *Client) watch(cn *conn) {
	sessDone := make(chan struct{})
	c.watchers.Add(2)
	go func() {
		defer c.watchers.Done()
		err := cn.sess.Wait()
		if err == nil {
			// Planner's own Close marks cn down first, with no cause;
			// otherwise the server ended the session.
			err = errSessionEnded
			if cn.proc != nil {
				err = errStdoutClosed
			}
		}
		cn.markDown(err)
		close(sessDone)
	}()
	go func() {
		defer c.watchers.Done()
		if cn.proc != nil {
			select {
			case <-cn.proc.exited:
			case <-sessDone:
				cn.proc.waitExit(exitSettle)
			}
		} else {
			<-sessDone
		}
		cn.markDown(nil)
		_ = cn.shutdown(c.cfg.KillGrace, cn.brokeBecause())
	}()
}

// The causes of a session that ended without an error of its own.
var (
	errStdoutClosed = errors.New("the server closed its standard output")
	errSessionEnded = errors.New("the server ended the session")
)

// session returns a live connection, starting the server again if it went
// down (once per crash, at most maxRestarts times in all).
func (c *Client) session(ctx context.Context) (*conn, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrClosed
		}
		if cn := c.cur; !cn.isDown() {
			c.mu.Unlock()
			return cn, nil
		}
		if a := c.attempt; a != nil {
			c.mu.Unlock()
			select {
			case <-a.done:
				if a.retry {
					continue
				}
				return a.cn, a.err
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		if c.restarts >= c.maxRestarts {
			cur := c.cur
			c.mu.Unlock()
			what, stderr, causes := cur.describe(0)
			return nil, &downError{msg: withStderr(
				fmt.Sprintf("server %s %s and is not restarted again (max_restarts is %d)", c.label, what, c.maxRestarts), stderr), causes: causes}
		}
		c.restarts++
		a := &attempt{done: make(chan struct{}), prev: c.cur}
		c.attempt = a
		c.mu.Unlock()
		return c.restart(ctx, a)
	}
}

// restart runs attempt a.
func (c *Client) restart(ctx context.Context, a *attempt) (*conn, error) {
	cn, err := c.start(ctx)
	c.mu.Lock()
	c.attempt = nil
	closed := c.closed
	switch {
	case err == nil && !closed:
		c.cur = cn
		c.all = append(c.all, cn)
	case err != nil && ctx.Err() != nil && !closed:
		// The caller gave up; that does not count as a restart.
		c.restarts--
		a.retry = true
	}
	c.mu.Unlock()
	switch {
	case closed:
		if cn != nil {
			_ = cn.shutdown(c.cfg.KillGrace, "the client was closed")
		}
		cn, err = nil, ErrClosed
	case err != nil && a.retry:
		err = context.Cause(ctx)
	case err != nil:
		// Say why the server went down as well as why it would not
		// start again: the first is often the cause of the second.
		what, _, causes := a.prev.describe(0)
		err = &downError{msg: fmt.Sprintf("server %s %s, and restarting it failed: %v", c.label, what, err), causes: append(causes, err)}
	}
	a.cn, a.err = cn, err
	close(a.done)
	return cn, err
}

// fail marks cn down after a call failed on a broken connection and
// returns the error for that call.
func (c *Client) fail(cn *conn, cause error) error {
	cn.markDown(cause)
	what, stderr, causes := cn.describe(2 * time.Second)
	go func() { _ = cn.shutdown(c.cfg.KillGrace, cn.brokeBecause()) }()
	c.mu.Lock()
	next := "calling the tool again restarts the server"
	if c.restarts >= c.maxRestarts {
		next = fmt.Sprintf("the server is not restarted again (max_restarts is %d)", c.maxRestarts)
	}
	c.mu.Unlock()
	return &downError{msg: withStderr(fmt.Sprintf("server %s %s and the call did not complete; %s", c.label, what, next), stderr), causes: causes}
}

func (cn *conn) isDown() bool {
	select {
	case <-cn.down:
		return true
	default:
		return false
	}
}

// markDown records that cn is broken; the first cause given wins.
func (cn *conn) markDown(cause error) {
	cn.downOnce.Do(func() {
		cn.cause = cause
		close(cn.down)
	})
}

// describe says why cn went down, waiting up to wait for a stdio server's
// exit, and returns the end of the server's standard error and the
// causes to wrap: the process's *ExitError once it exited, and the
// connection's error. An exit by a signal planner sent says why planner
// sent it, since the signal alone would hide the cause.
func (cn *conn) describe(wait time.Duration) (what, stderr string, causes []error) {
	var cause string
	select {
	case <-cn.down:
		if cn.cause != nil {
			cause = cn.cause.Error()
			causes = append(causes, cn.cause)
		}
	default:
	}
	if cn.proc == nil {
		if cause == "" {
			return "lost the connection", "", causes
		}
		return "lost the connection (" + cause + ")", "", causes
	}
	if cn.proc.waitExit(wait) {
		exit := cn.proc.exitError()
		return exit.what(), exit.Stderr, append([]error{exit}, causes...)
	}
	what = "broke the connection"
	if cause != "" {
		what += " (" + cause + ")"
	}
	return what, cn.proc.stderrTail(), causes
}

// brokeBecause is the reason planner gives for stopping the server of
// cn after its connection broke.
func (cn *conn) brokeBecause() string {
	select {
	case <-cn.down:
		if cn.cause != nil {
			return "its connection broke (" + cn.cause.Error() + ")"
		}
	default:
	}
	return "its connection broke"
}

// withStderr appends the end of a server's standard error to msg.
func withStderr(msg, stderr string) string {
	if stderr == "" {
		return msg
	}
	return msg + "; its stderr ends with:\n" + stderr
}

// shutdown closes the session and stops the server process, for reason
// (see process.stop); it is idempotent, and concurrent callers wait for
// the first, whose reason counts.
func (cn *conn) shutdown(grace time.Duration, reason string) error {
	cn.stopOnce.Do(func() {
		cn.markDown(nil)
		if cn.proc != nil {
			// Closing the session closes the server's stdin, which
			// may end it before any signal: say why either way.
			cn.proc.beginStop(reason)
		}
		closed := make(chan struct{})
		go func() {
			_ = cn.sess.Close()
			close(closed)
		}()
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case <-closed:
		case <-timer.C:
		}
		if cn.proc != nil {
			cn.stopErr = cn.proc.stop(grace, reason)
			select {
			case <-closed:
			case <-time.After(grace):
			}
		}
	})
	return cn.stopErr
}

// normalize checks cfg and fills in its defaults.
func normalize(cfg *Config) error {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{Field: field, Err: fmt.Errorf(format, args...)}
	}
	switch {
	case len(cfg.Command) > 0 && cfg.URL != "":
		return bad("command", "set either command (a server run as a local process) or url (a streamable-HTTP server), not both")
	case len(cfg.Command) == 0 && cfg.URL == "":
		return bad("command", "set command (the argv of a server run as a local process, such as [npx, -y, @modelcontextprotocol/server-filesystem, ./docs]) or url (a streamable-HTTP endpoint)")
	}
	if cfg.URL != "" {
		u, err := url.Parse(cfg.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("url", "%q is not an http:// or https:// URL", cfg.URL)
		}
		for field, set := range map[string]bool{"env": len(cfg.Env) > 0, "inherit_env": cfg.InheritEnv, "cwd": cfg.Dir != ""} {
			if set {
				return bad(field, "%s applies to a command server, not to a url one", field)
			}
		}
		headers, err := expandHeaders(cfg.Headers)
		if err != nil {
			return &ConfigError{Field: "headers", Err: err}
		}
		cfg.Headers = headers
	} else {
		if strings.TrimSpace(cfg.Command[0]) == "" {
			return bad("command", "the program name (the first word) is empty")
		}
		if len(cfg.Headers) > 0 {
			return bad("headers", "headers apply to a url server, not to a command one")
		}
		if cfg.Dir != "" {
			if fi, err := os.Stat(cfg.Dir); err != nil || !fi.IsDir() {
				return bad("cwd", "%q is not a directory", cfg.Dir)
			}
		}
		for k := range cfg.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return bad("env", "%q is not a valid environment variable name", k)
			}
		}
	}
	switch {
	case cfg.StartupTimeout < 0:
		return bad("startup_timeout", "must be positive, got %s", cfg.StartupTimeout)
	case cfg.CallTimeout < 0:
		return bad("call_timeout", "must be positive, got %s", cfg.CallTimeout)
	}
	if cfg.StartupTimeout == 0 {
		cfg.StartupTimeout = DefaultStartupTimeout
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = DefaultKillGrace
	}
	if cfg.MaxRestarts == 0 {
		cfg.MaxRestarts = DefaultMaxRestarts
	}
	if cfg.Name == "" {
		cfg.Name = deriveName(cfg)
	}
	return nil
}

// deriveName names a server after its URL's host or its command.
func deriveName(cfg *Config) string {
	if cfg.URL != "" {
		if u, err := url.Parse(cfg.URL); err == nil {
			return u.Hostname()
		}
		return cfg.URL
	}
	// Launchers run the package or script named by their first operand;
	// a server run by one is named after that operand.
	launchers := []string{"npx", "bunx", "uvx", "pipx", "node", "deno", "bun", "python", "python3", "uv", "go", "docker", "podman"}
	prog := filepath.Base(cfg.Command[0])
	prog = strings.TrimSuffix(prog, filepath.Ext(prog))
	if !slices.Contains(launchers, prog) {
		return prog
	}
	for _, a := range cfg.Command[1:] {
		if strings.HasPrefix(a, "-") || a == "run" || a == "exec" || a == "tool" {
			continue
		}
		return a
	}
	return prog
}

// redactURL drops the user information and query of a URL, where tokens
// are often passed, so that messages can show it.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	return u.String()
}

// expandHeaders replaces ${NAME} in header values with environment
// variables; an unset variable is an error.
func expandHeaders(h map[string]string) (map[string]string, error) {
	if len(h) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") {
			return nil, fmt.Errorf("%q is not a valid header name", k)
		}
		v, err := expandEnv(v)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", k, err)
		}
		if strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("header %s has a line break in its value", k)
		}
		out[k] = v
	}
	return out, nil
}

// expandEnv replaces each ${NAME} in s with the environment variable NAME.
// Other dollar signs are kept as written.
func expandEnv(s string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", s)
		}
		name := s[i+2 : i+j]
		if !validEnvName(name) {
			return "", fmt.Errorf("${%s} does not name an environment variable", name)
		}
		val, ok := os.LookupEnv(name)
		if !ok {
			return "", fmt.Errorf("the environment variable %s is not set", name)
		}
		b.WriteString(s[:i])
		b.WriteString(val)
		s = s[i+j+1:]
	}
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && !(r >= 'A' && r <= 'Z') && !(r >= 'a' && r <= 'z') && !(i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
