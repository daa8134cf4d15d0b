// Package temporaltest starts a Temporal dev server (the Temporal CLI's
// `temporal server start-dev`) for a test: headless, on loopback ports of
// its own, with its database in the test's temporary folder, and stops it
// when the test ends.
//
// The CLI binary is PLANNER_TEMPORAL_BIN when set, else `temporal` on the
// PATH; without one the test fails, saying how to install it
// (scripts/integration-deps.sh, which make test runs, builds it into a cache
// folder and sets the variable):
//
//	go install github.com/temporalio/cli/cmd/temporal@v1.5.1
//
// The tests that start a server are integration tests, built only with
// the build tag integration (go test -tags integration; make test sets
// it).
package temporaltest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/planner-engine/planner/internal/integrationlog"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
)

// BinEnv names the environment variable that gives the Temporal CLI
// binary's path.
const BinEnv = "PLANNER_TEMPORAL_BIN"

// CLIVersion is the Temporal CLI version make test installs
// (scripts/integration-deps.sh reads it from this file) and the README
// names.
const CLIVersion = "v1.5.1"

// Namespace is the namespace the dev server creates and Start's servers
// serve.
const Namespace = "default"

// startTimeout bounds how long Start waits for the frontend to answer.
const startTimeout = 60 * time.Second

// stopTimeout is how long Stop waits after SIGTERM before it kills the
// server's process group.
const stopTimeout = 10 * time.Second

// Server is a running dev server.
type Server struct {
	// HostPort is the frontend's gRPC address ("127.0.0.1:PORT"), what
	// client.Options.HostPort and `planner worker --temporal` take.
	HostPort string
	// Namespace is the namespace to use: "default".
	Namespace string

	cmd     *exec.Cmd
	log     *lockedBuffer
	exited  chan struct{}
	stopped sync.Once
}

// Bin returns the Temporal CLI binary: PLANNER_TEMPORAL_BIN when set, else
// `temporal` on the PATH. It reports false when there is none.
func Bin() (string, bool) {
	if b := os.Getenv(BinEnv); b != "" {
		if _, err := os.Stat(b); err == nil {
			return b, true
		}
		return b, false
	}
	b, err := exec.LookPath("temporal")
	return b, err == nil
}

// Start starts a dev server for t and stops it when t ends. It fails t,
// saying how to install one, when no Temporal CLI binary is found, and
// when the server does not answer within a minute.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, ok := Bin()
	if !ok {
		if os.Getenv(BinEnv) != "" {
			t.Fatalf("the Temporal CLI binary named by %s (%s) does not exist; install it with: GOBIN=DIR go install github.com/temporalio/cli/cmd/temporal@%s",
				BinEnv, bin, CLIVersion)
		}
		t.Fatalf("no Temporal CLI binary (%s unset, no `temporal` on PATH), which the tests against a Temporal dev server need; "+
			"install it with: go install github.com/temporalio/cli/cmd/temporal@%s (scripts/integration-deps.sh, which make test runs, does)", BinEnv, CLIVersion)
	}
	integrationlog.Note(t, "temporal", bin)
	ports, err := freePorts(3)
	if err != nil {
		t.Fatalf("temporaltest: %v", err)
	}
	dir := t.TempDir()
	args := []string{"server", "start-dev", "--headless",
		"--ip", "127.0.0.1",
		"--port", strconv.Itoa(ports[0]),
		"--http-port", strconv.Itoa(ports[1]),
		"--metrics-port", strconv.Itoa(ports[2]),
		"--db-filename", filepath.Join(dir, "temporal.db"),
		"--log-level", "warn",
	}
	s := &Server{HostPort: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])), Namespace: Namespace,
		log: &lockedBuffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.Dir = dir
	setProcessGroup(s.cmd)
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("temporaltest: starting %s: %v", bin, err)
	}
	go func() {
		_ = s.cmd.Wait() // its exit status says nothing Stop needs
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("temporal dev server log (last 4 KiB):\n%s", s.LogTail(4096))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := s.waitReady(ctx); err != nil {
		t.Fatalf("temporaltest: the dev server (%s %v) did not answer at %s: %v\nits log:\n%s", bin, args, s.HostPort, err, s.LogTail(4096))
	}
	return s
}

// waitReady polls until the frontend answers a health check and describes
// the namespace, the server exits, or ctx ends.
func (s *Server) waitReady(ctx context.Context) error {
	var last error
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("the server exited (%v)", s.cmd.ProcessState)
		default:
		}
		last = s.ping(ctx)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-s.exited:
			return fmt.Errorf("the server exited (%v)", s.cmd.ProcessState)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *Server) ping(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := client.DialContext(pctx, s.ClientOptions())
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.CheckHealth(pctx, &client.CheckHealthRequest{}); err != nil {
		return err
	}
	_, err = c.WorkflowService().DescribeNamespace(pctx, &workflowservice.DescribeNamespaceRequest{Namespace: s.Namespace})
	return err
}

// ClientOptions are the options that dial the server, with the SDK's log
// discarded.
func (s *Server) ClientOptions() client.Options {
	return client.Options{HostPort: s.HostPort, Namespace: s.Namespace, Logger: QuietLogger()}
}

// Dial returns a client of the server, closed when t ends.
func (s *Server) Dial(t testing.TB) client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, s.ClientOptions())
	if err != nil {
		t.Fatalf("temporaltest: dialing %s: %v", s.HostPort, err)
	}
	t.Cleanup(c.Close)
	return c
}

// Stop stops the server: SIGTERM to its process group, then SIGKILL after
// 10 s. It is safe to call more than once; Start's cleanup calls it.
func (s *Server) Stop() {
	s.stopped.Do(func() {
		signalGroup(s.cmd, false)
		select {
		case <-s.exited:
			return
		case <-time.After(stopTimeout):
		}
		signalGroup(s.cmd, true)
		select {
		case <-s.exited:
		case <-time.After(stopTimeout):
		}
	})
}

// Exited reports whether the server process has ended.
func (s *Server) Exited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// LogTail returns the last n bytes of the server's output.
func (s *Server) LogTail(n int) string {
	b := s.log.Bytes()
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// QuietLogger is a Temporal SDK logger that discards everything, for
// clients and workers in tests.
func QuietLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close() // a listener only held to reserve its port
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		addr, ok := l.Addr().(*net.TCPAddr)
		if !ok {
			return nil, errors.New("finding a free port: not a TCP address")
		}
		ports = append(ports, addr.Port)
	}
	return ports, nil
}

// lockedBuffer is a bytes.Buffer safe for the server's two output pipes and
// readers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 1<<20 { // keep the last MiB or so
		rest := append([]byte(nil), b.buf.Bytes()[b.buf.Len()-(1<<19):]...)
		b.buf.Reset()
		b.buf.Write(rest)
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}
