package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP trace receiver on loopback that keeps the
// names of the spans it receives, and their service.name.
type otlpReceiver struct {
	mu       sync.Mutex
	names    []string
	services map[string]bool
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{services: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		msg := &coltracepb.ExportTraceServiceRequest{}
		if err == nil {
			err = proto.Unmarshal(body, msg)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range msg.ResourceSpans {
			for _, kv := range rs.Resource.GetAttributes() {
				if kv.Key == "service.name" {
					r.services[kv.Value.GetStringValue()] = true
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					r.names = append(r.names, s.Name)
				}
			}
		}
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(k, "")
	}
	return r
}

// take returns the span names received so far and forgets them.
func (r *otlpReceiver) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := r.names
	r.names = nil
	return names
}

// TestTelemetryRunAndCompareExportSpans: with OTEL_EXPORTER_OTLP_ENDPOINT
// set, run and compare export their spans over OTLP before they exit.
func TestTelemetryRunAndCompareExportSpans(t *testing.T) {
	r := startOTLPReceiver(t)

	res := cli(t, "run", "--config", configPath("react.yaml"), "--llm", "scripted:"+filepath.Join(repoRoot, "examples", "scripts", "react_demo.yaml"),
		"By how many kilometres does Jupiter's equatorial diameter exceed Saturn's?")
	require.Equal(t, exitOK, res.code, res.stderr)
	names := r.take()
	assert.Contains(t, names, "invoke_agent react")
	assert.Contains(t, names, "chat scripted")
	assert.Contains(t, names, "execute_tool search")
	assert.Contains(t, names, "node act")

	res = cli(t, "compare", "--config", configPath("cot.yaml"), "--llm", "sim", "--suite", "demo", "--limit", "2", "--out", filepath.Join(t.TempDir(), "out"))
	require.Equal(t, exitOK, res.code, res.stderr)
	names = r.take()
	runs := 0
	for _, n := range names {
		if n == "invoke_agent cot" {
			runs++
		}
	}
	assert.Equal(t, 2, runs, "one invoke_agent span per compared run: %v", names)
	assert.Contains(t, names, "chat sim")

	r.mu.Lock()
	defer r.mu.Unlock()
	assert.Equal(t, map[string]bool{"planner": true}, r.services)
}
