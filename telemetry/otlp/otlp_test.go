package otlp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planner-engine/planner/telemetry"
	"github.com/planner-engine/planner/telemetry/otlp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// clearEnv unsets every variable FromEnv reads, for the test.
func clearEnv(t *testing.T) {
	for _, k := range []string{otlp.EnvEndpoint, otlp.EnvTracesEndpoint, otlp.EnvProtocol, otlp.EnvTracesProtocol,
		otlp.EnvSDKDisabled, otlp.EnvTracesExporter, otlp.EnvServiceName, "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(k, "")
	}
}

func TestFromEnvIsOffUnlessAnEndpointIsSet(t *testing.T) {
	ctx := context.Background()
	clearEnv(t)
	tp, shutdown, err := otlp.FromEnv(ctx)
	require.NoError(t, err)
	assert.Nil(t, tp)
	require.NoError(t, shutdown(ctx))

	t.Setenv(otlp.EnvEndpoint, "http://127.0.0.1:1")
	for _, off := range [][2]string{{otlp.EnvSDKDisabled, "true"}, {otlp.EnvTracesExporter, "none"}} {
		t.Run(off[0], func(t *testing.T) {
			t.Setenv(off[0], off[1])
			tp, _, err := otlp.FromEnv(ctx)
			require.NoError(t, err)
			assert.Nil(t, tp)
		})
	}
	t.Run("grpc", func(t *testing.T) {
		t.Setenv(otlp.EnvTracesProtocol, "grpc")
		tp, shutdown, err := otlp.FromEnv(ctx)
		require.NoError(t, err)
		require.NotNil(t, tp)
		require.NoError(t, shutdown(ctx)) // nothing batched: no connection needed
	})
	t.Run("bad protocol", func(t *testing.T) {
		t.Setenv(otlp.EnvProtocol, "http/json")
		_, _, err := otlp.FromEnv(ctx)
		assert.ErrorIs(t, err, otlp.ErrConfig)
	})
	t.Run("bad exporter", func(t *testing.T) {
		t.Setenv(otlp.EnvTracesExporter, "zipkin")
		_, _, err := otlp.FromEnv(ctx)
		assert.ErrorIs(t, err, otlp.ErrConfig)
	})
}

// TestFromEnvExportsToAnOTLPReceiver runs a real OTLP/HTTP receiver on
// loopback and checks the spans of FromEnv's provider reach it.
func TestFromEnvExportsToAnOTLPReceiver(t *testing.T) {
	var (
		mu   sync.Mutex
		reqs []*coltracepb.ExportTraceServiceRequest
		errs []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		req := &coltracepb.ExportTraceServiceRequest{}
		if err == nil {
			err = proto.Unmarshal(body, req)
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.URL.Path != "/v1/traces":
			errs = append(errs, "path "+r.URL.Path)
		case r.Header.Get("Content-Type") != "application/x-protobuf":
			errs = append(errs, "content type "+r.Header.Get("Content-Type"))
		case r.Header.Get("X-Test") != "yes":
			errs = append(errs, "missing OTEL_EXPORTER_OTLP_HEADERS header")
		case err != nil:
			errs = append(errs, err.Error())
		default:
			reqs = append(reqs, req)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	clearEnv(t)
	t.Setenv(otlp.EnvEndpoint, srv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-test=yes")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tp, shutdown, err := otlp.FromEnv(ctx)
	require.NoError(t, err)
	require.NotNil(t, tp)
	spans := telemetry.New(tp)
	rctx, run := spans.StartRun(ctx, telemetry.Run{Agent: "react", RunID: "r9"})
	_, chat := spans.StartChat(rctx, telemetry.Chat{Provider: "scripted"})
	chat.SetUsage(telemetry.Usage{InputTokens: 5, OutputTokens: 2})
	chat.End()
	run.EndRun(nil)
	require.NoError(t, shutdown(ctx))

	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, errs)
	names := map[string]string{}
	service := ""
	for _, req := range reqs {
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.Resource.GetAttributes() {
				if kv.Key == "service.name" {
					service = kv.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				assert.Equal(t, telemetry.ScopeName, ss.Scope.GetName())
				for _, s := range ss.Spans {
					names[s.Name] = string(s.ParentSpanId)
				}
			}
		}
	}
	assert.Equal(t, "planner", service)
	require.Contains(t, names, "invoke_agent react")
	require.Contains(t, names, "chat scripted")
	assert.Empty(t, names["invoke_agent react"])
	assert.NotEmpty(t, names["chat scripted"])
	assert.True(t, strings.HasPrefix(srv.URL, "http://127.0.0.1"))
}
