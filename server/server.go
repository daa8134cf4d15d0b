// Package server is planner's HTTP API (`planner serve`): list, validate
// and draw pipelines; start runs and follow their events live with
// Server-Sent Events; list, resume and fork durable threads; approve or deny
// the tool calls they wait for; run comparisons and fetch their reports.
// Every answer is JSON (errors as {"error":{"code","message","details"}}),
// described by the OpenAPI 3.1 document served at /openapi.json.
//
// # Security
//
// A Server binds a loopback address unless told otherwise; a non-loopback
// address needs a token (Config.Token), which every /api request must then
// carry as "Authorization: Bearer TOKEN". Without a token only loopback Host
// headers are accepted (a DNS-rebinding page cannot reach the API). No CORS
// headers are ever sent, and state-changing requests from another origin
// (Sec-Fetch-Site, Origin) are refused. Request bodies are bounded
// (Config.MaxBodyBytes) and decoded strictly (unknown fields, wrong types and
// trailing data are errors). Every event, result and error is passed through
// the Engine's secret scrubber before it is sent, so provider API keys never
// reach a response.
//
// # Runs and threads
//
// Every run is a thread of the journal store (a generated name unless the
// request names one), so a run stopped by a shutdown, a crash or a restart
// is listed from the store and resumes where its journal ends. The events of
// the runs of this process are kept in memory (Config.MaxEventsPerRun per
// run) for the event streams.
package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/audit"
	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/compare"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/journal"
	"github.com/planner-engine/planner/journal/sqlitestore"
	"github.com/planner-engine/planner/redact"
	"github.com/planner-engine/planner/trace"
)

// Defaults of Config's limits.
const (
	// DefaultAddr is where a Server listens unless Config.Addr says
	// otherwise: loopback only.
	DefaultAddr = "127.0.0.1:8080"
	// DefaultDir is the folder of pipeline configs.
	DefaultDir = "configs"
	// DefaultMaxBodyBytes bounds a request body (1 MiB).
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxRuns bounds the runs executing at once.
	DefaultMaxRuns = 32
	// DefaultMaxQueued bounds the runs accepted but not yet executing.
	DefaultMaxQueued = 1024
	// DefaultMaxEventsPerRun bounds the events kept per run for its
	// event stream; older ones are dropped first.
	DefaultMaxEventsPerRun = 20000
	// DefaultMaxFinishedRuns bounds the finished runs kept in memory;
	// older ones are forgotten (their threads stay in the store).
	DefaultMaxFinishedRuns = 1000
	// DefaultMaxStreams bounds the event streams open at once.
	DefaultMaxStreams = 256
	// DefaultHeartbeat is the interval of an event stream's keep-alive
	// comments.
	DefaultHeartbeat = 15 * time.Second
	// DefaultMaxStreamDuration bounds one event stream connection; the
	// client reconnects with Last-Event-ID and loses nothing.
	DefaultMaxStreamDuration = time.Hour
	// DefaultWriteTimeout bounds writing one response (or one event of a
	// stream) to a client.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMaxCompares bounds the comparisons running at once.
	DefaultMaxCompares = 4
	// DefaultCompareDir is where comparisons write their run folders.
	DefaultCompareDir = "out/compare"
	// DefaultMaxIdlePipelines bounds the loaded pipelines kept for later
	// runs while no run uses them.
	DefaultMaxIdlePipelines = 8
	// DefaultPipelineIdleTimeout is how long a loaded pipeline no run
	// uses is kept before it is closed.
	DefaultPipelineIdleTimeout = 5 * time.Minute
	// DefaultMaxValidations bounds the validations of posted pipelines
	// running at once.
	DefaultMaxValidations = 4
	// DefaultValidateTimeout bounds one validation of a posted pipeline.
	DefaultValidateTimeout = 10 * time.Second
	// DefaultMaxValidateCorpusBytes bounds the corpus files a posted
	// pipeline's tools may read whole when it is validated (64 MiB).
	DefaultMaxValidateCorpusBytes = 64 << 20
)

// Errors of New and of requests. Handlers answer them with the status and
// code errorStatus gives; match them with errors.Is.
var (
	// ErrConfig: Config is unusable (no Engine, a bad address or folder).
	ErrConfig = errors.New("server: invalid config")
	// ErrNoToken: a non-loopback address without a token.
	ErrNoToken = errors.New("server: a non-loopback address needs a token (set PLANNER_SERVE_TOKEN)")
	// ErrBadRequest: a request that is malformed or names something
	// invalid.
	ErrBadRequest = errors.New("bad request")
	// ErrNotFound: no such pipeline, run, thread, approval or comparison.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request conflicts with the current state (a thread
	// that exists or is running, a thread not waiting for approval).
	ErrConflict = errors.New("conflict")
	// ErrTooLarge: a request body over Config.MaxBodyBytes.
	ErrTooLarge = errors.New("request body too large")
	// ErrBusy: too many runs, streams or comparisons at once.
	ErrBusy = errors.New("too many requests at once")
	// ErrUnauthorized: a missing or wrong bearer token.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrForbidden: a cross-origin state-changing request, or a Host the
	// server does not answer.
	ErrForbidden = errors.New("forbidden")
	// ErrShuttingDown: the server is stopping and starts nothing new.
	ErrShuttingDown = errors.New("the server is shutting down")
	// ErrTimeout: the server stopped working on a request that took
	// longer than its limit (Config.ValidateTimeout).
	ErrTimeout = errors.New("the request took too long")
)

// TaskLoader loads the tasks of a suite, "demo" (the built-in demo suite)
// or a suite file's path, and says its format (comparisons judge answers
// with suite.DefaultScorer of it).
type TaskLoader func(ctx context.Context, suiteName string) ([]suite.Task, suite.Format, error)

// CompareLoader returns what builds the pipelines of a comparison over
// tasks; the command line passes one whose engine plays those tasks with
// the sim model.
type CompareLoader func(ctx context.Context, tasks []suite.Task) (compare.Loader, error)

// Config configures a Server. Only Engine is required.
type Config struct {
	// Engine loads, validates and runs the pipelines. Required. Its
	// scrubber (Engine.Scrubber) scrubs everything the server sends;
	// when it has none, redact.New() does.
	Engine *planner.Engine
	// Dir is the folder of pipeline configs (*.yaml, *.yml) that runs and
	// comparisons name. Default DefaultDir.
	Dir string
	// Root is the folder that file paths in requests (suite files, the
	// FILE of scripted:FILE and replay:FILE, and every file or folder a
	// pipeline posted to POST /api/pipelines/validate names) must lie in,
	// symbolic links resolved; relative paths of requests are taken
	// relative to it (those of a posted pipeline relative to Dir, as if
	// it were a file there). Default: the working directory.
	Root string
	// Store keeps the threads. Default: the SQLite store at StorePath,
	// opened by New and closed by Close.
	Store journal.Store
	// StorePath is the SQLite thread store's file when Store is nil.
	// Default: DefaultStorePath(), the command line's default store.
	StorePath string
	// Audit records every tool call of the server's runs (package audit;
	// `planner audit` lists them). Default: when New opens the store, the
	// audit log audit.db beside it, opened by New and closed by Close;
	// none when Store is given.
	Audit planner.ToolAuditor
	// Addr is the address Serve's caller listens on; New checks it
	// needs a token. Default DefaultAddr.
	Addr string
	// Token, when set, must come with every /api request as
	// "Authorization: Bearer TOKEN". Required for a non-loopback Addr.
	Token string
	// LLM is the model spec of runs and comparisons that name none
	// ("sim", "scripted:FILE", "openai:gpt-4o-mini"). Default: the
	// pipeline's own llm block.
	LLM string
	// Tasks loads a suite's tasks for runs and comparisons that name a
	// suite. Default: the demo suite for "demo", else the file (under
	// Root) in its detected format.
	Tasks TaskLoader
	// CompareLoader builds a comparison's pipelines. Default: Engine.
	CompareLoader CompareLoader
	// CompareDir is the folder comparisons write their run folders into
	// (compare.Identity.DirName names each). Default DefaultCompareDir.
	CompareDir string
	// MaxBodyBytes bounds a request body; a larger one is answered 413.
	// Default DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxRuns bounds the runs executing at once; MaxQueued the runs
	// waiting for a slot. Past both, a new run is answered 429.
	// Defaults DefaultMaxRuns and DefaultMaxQueued.
	MaxRuns, MaxQueued int
	// MaxEventsPerRun bounds the events kept per run for its stream.
	// Default DefaultMaxEventsPerRun.
	MaxEventsPerRun int
	// MaxFinishedRuns bounds the finished runs kept in memory. Default
	// DefaultMaxFinishedRuns.
	MaxFinishedRuns int
	// MaxStreams bounds the event streams open at once; past it a new
	// one is answered 429. Default DefaultMaxStreams.
	MaxStreams int
	// Heartbeat is the interval of a stream's keep-alive comments.
	// Default DefaultHeartbeat.
	Heartbeat time.Duration
	// MaxStreamDuration bounds one stream connection. Default
	// DefaultMaxStreamDuration.
	MaxStreamDuration time.Duration
	// WriteTimeout bounds writing one response, or one event of a
	// stream. Default DefaultWriteTimeout.
	WriteTimeout time.Duration
	// MaxCompares bounds the comparisons running at once. Default
	// DefaultMaxCompares.
	MaxCompares int
	// MaxIdlePipelines bounds the loaded pipelines (with their tools:
	// search indexes, MCP sessions, connection pools) kept while no run
	// uses them, for the next run of the same config; past it the least
	// recently used is closed. Runs of one config and content share one
	// loaded pipeline, so the pipelines in memory are at most the configs
	// the MaxRuns running runs use plus MaxIdlePipelines; queued runs hold
	// none. Default DefaultMaxIdlePipelines.
	MaxIdlePipelines int
	// PipelineIdleTimeout is how long a loaded pipeline no run uses is
	// kept before it is closed. Default DefaultPipelineIdleTimeout.
	PipelineIdleTimeout time.Duration
	// MaxValidations bounds the validations of posted pipelines running
	// at once; past it POST /api/pipelines/validate is answered 429.
	// Default DefaultMaxValidations.
	MaxValidations int
	// ValidateTimeout bounds one validation of a posted pipeline; past
	// it the request is answered 504 (the validation's work is
	// cancelled, and it keeps its place in MaxValidations until it has
	// stopped). Default DefaultValidateTimeout.
	ValidateTimeout time.Duration
	// MaxValidateCorpusBytes bounds the size of the corpus files (a
	// search corpus, a docstore source) that a posted pipeline's tools
	// read whole when it is validated; a larger corpus is refused, so
	// that a validation's memory is bounded. Default
	// DefaultMaxValidateCorpusBytes.
	MaxValidateCorpusBytes int64
	// AllowEnv names the environment variables that ${VAR} references in
	// a posted pipeline may read (exact names, or prefixes ending in *);
	// any other reference counts as unset, so that a posted pipeline
	// cannot read the server's environment. Pipelines of Dir, which the
	// operator wrote, read the whole environment. Default: none.
	AllowEnv []string
}

// Server is the HTTP API. It implements http.Handler; Serve runs it on a
// listener with sensible timeouts and a graceful shutdown. Build one with
// New and Close it when done.
type Server struct {
	cfg      Config
	engine   *planner.Engine
	scrub    trace.Scrubber
	store    journal.Store
	ownStore bool // New opened store: Close closes it
	audit    planner.ToolAuditor
	ownAudit *audit.Log // New opened it: Close closes it
	mux      *http.ServeMux
	handler  http.Handler
	cop      *http.CrossOriginProtection
	loopback bool // Addr is a loopback address

	ctx     context.Context    // cancelled by Close: runs and streams end
	cancel  context.CancelFunc //
	slots   chan struct{}      // one per executing run
	streams chan struct{}      // one per open stream
	cmpSem  chan struct{}      // one per running comparison
	valSem  chan struct{}      // one per running validation
	wg      sync.WaitGroup     // runs, their reservations, comparisons and validations in flight
	pipes   *pipeCache         // the runs' loaded pipelines
	// realRoot is Root with its symbolic links resolved: the folder the
	// paths of posted pipelines must resolve into.
	realRoot string

	mu       sync.Mutex
	runs     map[string]*run
	order    []string          // run ids, oldest first
	active   map[string]string // thread name -> id of the run running it
	parked   map[string]*parkedPipeline
	parkList []string // thread names of parked, oldest first
	compares map[string]*comparison
	closed   bool
}

// DefaultStorePath is the thread store the command line uses when no
// --store is given: $PLANNER_STORE, else $XDG_STATE_HOME/planner/threads.db,
// else ~/.local/state/planner/threads.db.
// It is sqlitestore.DefaultPath with the process environment; its error
// wraps ErrConfig.
func DefaultStorePath() (string, error) {
	p, err := sqlitestore.DefaultPath(os.Getenv)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return p, nil
}

// IsLoopback reports whether addr (host:port) listens on loopback only:
// localhost or a loopback IP. An empty host (all interfaces) is not.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// New checks cfg, fills its defaults, opens the thread store when cfg has
// none, and returns the Server. It fails with ErrConfig for an unusable
// cfg and with ErrNoToken for a non-loopback Addr without a Token.
func New(cfg Config) (*Server, error) {
	if cfg.Engine == nil {
		return nil, fmt.Errorf("%w: Engine is required", ErrConfig)
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return nil, fmt.Errorf("%w: address %q: %w", ErrConfig, cfg.Addr, err)
	}
	loopback := IsLoopback(cfg.Addr)
	if !loopback && cfg.Token == "" {
		return nil, fmt.Errorf("%w (address %s)", ErrNoToken, cfg.Addr)
	}
	if cfg.Dir == "" {
		cfg.Dir = DefaultDir
	}
	if cfg.Root == "" {
		cfg.Root = "."
	}
	var err error
	if cfg.Root, err = filepath.Abs(cfg.Root); err != nil {
		return nil, fmt.Errorf("%w: root: %w", ErrConfig, err)
	}
	if cfg.CompareDir == "" {
		cfg.CompareDir = DefaultCompareDir
	}
	setDefault(&cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	setDefault(&cfg.MaxRuns, DefaultMaxRuns)
	setDefault(&cfg.MaxQueued, DefaultMaxQueued)
	setDefault(&cfg.MaxEventsPerRun, DefaultMaxEventsPerRun)
	setDefault(&cfg.MaxFinishedRuns, DefaultMaxFinishedRuns)
	setDefault(&cfg.MaxStreams, DefaultMaxStreams)
	setDefault(&cfg.Heartbeat, DefaultHeartbeat)
	setDefault(&cfg.MaxStreamDuration, DefaultMaxStreamDuration)
	setDefault(&cfg.WriteTimeout, DefaultWriteTimeout)
	setDefault(&cfg.MaxCompares, DefaultMaxCompares)
	setDefault(&cfg.MaxIdlePipelines, DefaultMaxIdlePipelines)
	setDefault(&cfg.PipelineIdleTimeout, DefaultPipelineIdleTimeout)
	setDefault(&cfg.MaxValidations, DefaultMaxValidations)
	setDefault(&cfg.ValidateTimeout, DefaultValidateTimeout)
	setDefault(&cfg.MaxValidateCorpusBytes, DefaultMaxValidateCorpusBytes)
	if err := config.EnvAllowList(cfg.AllowEnv).Check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	realRoot := cfg.Root
	if r, err := filepath.EvalSymlinks(cfg.Root); err == nil {
		realRoot = r
	}
	s := &Server{
		cfg: cfg, engine: cfg.Engine, scrub: cfg.Engine.Scrubber(), loopback: loopback, realRoot: realRoot,
		slots: make(chan struct{}, cfg.MaxRuns), streams: make(chan struct{}, cfg.MaxStreams), cmpSem: make(chan struct{}, cfg.MaxCompares),
		valSem: make(chan struct{}, cfg.MaxValidations),
		runs:   map[string]*run{}, active: map[string]string{}, parked: map[string]*parkedPipeline{}, compares: map[string]*comparison{},
		cop: http.NewCrossOriginProtection(),
	}
	if s.scrub == nil {
		s.scrub = redact.New()
	}
	if s.cfg.Tasks == nil {
		s.cfg.Tasks = s.defaultTasks
	}
	if s.cfg.CompareLoader == nil {
		s.cfg.CompareLoader = func(context.Context, []suite.Task) (compare.Loader, error) { return engineLoader{cfg.Engine}, nil }
	}
	s.store = cfg.Store
	if s.store == nil {
		path := cfg.StorePath
		if path == "" {
			if path, err = DefaultStorePath(); err != nil {
				return nil, err
			}
		}
		st, err := sqlitestore.Open(context.Background(), path)
		if err != nil {
			return nil, fmt.Errorf("%w: thread store %s: %w", ErrConfig, path, err)
		}
		s.store, s.ownStore = st, true
		if cfg.Audit == nil {
			l, err := audit.Open(context.Background(), audit.PathBeside(path), audit.WithScrubber(s.scrub))
			if err != nil {
				_ = st.Close()
				return nil, fmt.Errorf("%w: audit log beside %s: %w", ErrConfig, path, err)
			}
			s.audit, s.ownAudit = l, l
		}
	}
	if cfg.Audit != nil {
		s.audit = cfg.Audit
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.pipes = newPipeCache(s.ctx, s.engine, cfg.MaxIdlePipelines, cfg.PipelineIdleTimeout)
	s.mux = http.NewServeMux()
	for _, rt := range s.routes() {
		s.mux.HandleFunc(rt.method+" "+rt.pattern, rt.handler)
	}
	s.mux.HandleFunc("/", s.webRoot()) // the web page (web.go); JSON 404 for any other path
	s.handler = s.guard(s.mux)
	return s, nil
}

// setDefault sets *v to def when it is not positive.
func setDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// route is one endpoint; routes lists them all, and the OpenAPI document
// describes exactly these (a test checks it).
type route struct {
	method, pattern string
	handler         http.HandlerFunc
}

func (s *Server) routes() []route {
	return []route{
		{"GET", "/healthz", s.healthz},
		{"GET", "/openapi.json", s.openAPI},
		{"GET", "/api/pipelines", s.listPipelines},
		{"POST", "/api/pipelines/validate", s.validatePipeline},
		{"GET", "/api/pipelines/{name}/graph", s.pipelineGraph},
		{"POST", "/api/runs", s.startRun},
		{"GET", "/api/runs", s.listRuns},
		{"GET", "/api/runs/{id}", s.getRun},
		{"GET", "/api/runs/{id}/events", s.runEvents},
		{"POST", "/api/runs/{id}/cancel", s.cancelRun},
		{"GET", "/api/threads", s.listThreads},
		{"GET", "/api/threads/{name}", s.getThread},
		{"POST", "/api/threads/{name}/resume", s.resumeThread},
		{"POST", "/api/threads/{name}/fork", s.forkThread},
		{"POST", "/api/threads/{name}/turns", s.addTurn},
		{"GET", "/api/approvals", s.listApprovals},
		{"POST", "/api/approvals/{thread}", s.decide},
		{"POST", "/api/compares", s.startCompare},
		{"GET", "/api/compares", s.listCompares},
		{"GET", "/api/compares/{id}", s.getCompare},
		{"GET", "/api/compares/{id}/report", s.compareReport},
		{"GET", "/api/compares/{id}/tasks", s.compareTasks},
		{"GET", "/api/compares/{id}/trace", s.compareTrace},
		{"GET", "/v1/models", s.listModels},
		{"POST", "/v1/chat/completions", s.chatCompletions},
	}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// guard checks what every request must pass before its handler: the Host
// (without a token, loopback names only), the bearer token of /api
// requests, the origin of state-changing requests; and bounds the body.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		if s.cfg.Token == "" && !loopbackHost(r.Host) {
			s.fail(w, r, fmt.Errorf("%w: host %q: a server without a token answers only loopback names (localhost, 127.0.0.1, [::1])", ErrForbidden, r.Host))
			return
		}
		if s.cfg.Token != "" && needsToken(r.URL.Path) && !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="planner"`)
			s.fail(w, r, fmt.Errorf("%w: send the server's token as Authorization: Bearer TOKEN (PLANNER_SERVE_TOKEN)", ErrUnauthorized))
			return
		}
		if err := s.cop.Check(r); err != nil {
			s.fail(w, r, fmt.Errorf("%w: cross-origin %s refused: %w", ErrForbidden, r.Method, err))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		}
		if r.Method == http.MethodPost { // a body that trickles in is cut off (streams are GETs: no read deadline)
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.WriteTimeout))
		}
		next.ServeHTTP(w, r)
	})
}

// needsToken reports whether a request for path must carry the token when
// the server has one: the API, the OpenAI-compatible endpoint and the MCP
// endpoint (the web page and /healthz do not; the page asks for it).
func needsToken(path string) bool {
	return strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/v1/") || path == "/mcp" || strings.HasPrefix(path, "/mcp/")
}

// authorized reports whether r carries the token, compared in constant
// time.
func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(s.cfg.Token)) == 1
}

// loopbackHost reports whether a Host header names the local machine.
func loopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	return IsLoopback(net.JoinHostPort(h, "0"))
}

// Serve answers requests on l until ctx ends, then shuts down gracefully:
// it stops accepting, cancels the runs (their threads are saved as
// interrupted and resume later), ends the event streams, and waits up to
// grace for the handlers and runs to return. The http.Server has a
// ReadHeaderTimeout and an IdleTimeout; write deadlines are set per
// response (none for a whole event stream).
func (s *Server) Serve(ctx context.Context, l net.Listener, grace time.Duration) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	s.stop()
	err := hs.Shutdown(sctx)
	if werr := s.wait(sctx); err == nil {
		err = werr
	}
	if serr := <-errc; err == nil && !errors.Is(serr, http.ErrServerClosed) {
		err = serr
	}
	return err
}

// stop refuses new runs and cancels those in flight and the streams.
func (s *Server) stop() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
}

// wait waits for the runs and comparisons in flight, or ctx.
func (s *Server) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("server: runs still stopping: %w", ctx.Err())
	}
}

// Close cancels every run and stream, waits for the runs to save their
// threads, closes the loaded pipelines (cached and parked) and the store
// New opened. Safe to call twice.
func (s *Server) Close() error {
	s.stop()
	s.wg.Wait()
	s.mu.Lock()
	parked := s.parked
	s.parked, s.parkList = map[string]*parkedPipeline{}, nil
	s.mu.Unlock()
	s.pipes.close()
	var errs []error
	for _, p := range parked {
		errs = append(errs, p.p.Close())
	}
	if s.ownStore {
		if c, ok := s.store.(interface{ Close() error }); ok {
			errs = append(errs, c.Close())
		}
		s.ownStore = false
	}
	if s.ownAudit != nil {
		errs = append(errs, s.ownAudit.Close())
		s.ownAudit = nil
	}
	return errors.Join(errs...)
}

// Store returns the thread store the server uses.
func (s *Server) Store() journal.Store { return s.store }

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	running, closed := len(s.active), s.closed
	s.mu.Unlock()
	status := "ok"
	code := http.StatusOK
	if closed {
		status, code = "stopping", http.StatusServiceUnavailable
	}
	s.writeJSON(w, r, code, map[string]any{"status": status, "runs_active": running})
}
