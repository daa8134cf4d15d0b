// Package otlp builds the OpenTelemetry TracerProvider that the standard
// OTEL_* environment variables describe, exporting spans over OTLP (HTTP
// or gRPC). It holds the OpenTelemetry SDK and the exporters, so that
// package telemetry, which the engine imports, needs only the
// OpenTelemetry API: a program that wants spans exported (the command
// line) builds the provider here and hands it to telemetry.New or
// planner.WithTracerProvider.
package otlp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.32.0"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// The environment variables FromEnv reads besides those the OTLP exporters
// and the SDK read themselves (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT,
// _COMPRESSION, _CERTIFICATE, OTEL_TRACES_SAMPLER, OTEL_BSP_*,
// OTEL_RESOURCE_ATTRIBUTES, ...). Whether content is recorded is
// telemetry.ContentFromEnv's.
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvSDKDisabled    = "OTEL_SDK_DISABLED"
	EnvTracesExporter = "OTEL_TRACES_EXPORTER"
	EnvServiceName    = "OTEL_SERVICE_NAME"
)

// DefaultServiceName is service.name unless OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES) names another.
const DefaultServiceName = "planner"

// ShutdownTimeout bounds the flush of FromEnv's shutdown function.
const ShutdownTimeout = 5 * time.Second

// ErrConfig marks an unusable OpenTelemetry environment setting.
var ErrConfig = errors.New("telemetry: bad OpenTelemetry setting")

func isTrue(v string) bool {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && b
}

// FromEnv builds the TracerProvider the standard OpenTelemetry environment
// variables ask for. Export is on when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, and off (a nil provider and a
// shutdown that does nothing) otherwise, or when OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none. The protocol is OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
// or OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf (the default) or grpc; the
// exporters read the endpoint, headers, timeout, compression and TLS
// settings themselves. Spans are batched; service.name is "planner" unless
// OTEL_SERVICE_NAME says otherwise. shutdown flushes the spans still
// batched and stops the exporter, within ShutdownTimeout even when its
// context is already cancelled. Errors wrap ErrConfig for an unsupported
// setting, or the exporter's error.
func FromEnv(ctx context.Context) (tp oteltrace.TracerProvider, shutdown func(context.Context) error, err error) {
	none := func(context.Context) error { return nil }
	if isTrue(os.Getenv(EnvSDKDisabled)) {
		return nil, none, nil
	}
	switch exp := strings.ToLower(strings.TrimSpace(os.Getenv(EnvTracesExporter))); exp {
	case "none":
		return nil, none, nil
	case "", "otlp":
	default:
		return nil, none, fmt.Errorf("%w: %s=%q (planner exports otlp or none)", ErrConfig, EnvTracesExporter, exp)
	}
	if strings.TrimSpace(os.Getenv(EnvTracesEndpoint)) == "" && strings.TrimSpace(os.Getenv(EnvEndpoint)) == "" {
		return nil, none, nil
	}
	protocol := strings.TrimSpace(os.Getenv(EnvTracesProtocol))
	if protocol == "" {
		protocol = strings.TrimSpace(os.Getenv(EnvProtocol))
	}
	var exporter sdktrace.SpanExporter
	switch protocol {
	case "", "http/protobuf":
		exporter, err = otlptracehttp.New(ctx)
	case "grpc":
		exporter, err = otlptracegrpc.New(ctx)
	default:
		return nil, none, fmt.Errorf("%w: OTLP protocol %q (planner speaks http/protobuf or grpc)", ErrConfig, protocol)
	}
	if err != nil {
		return nil, none, fmt.Errorf("telemetry: OTLP %s exporter: %w", protocol, err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(DefaultServiceName)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME win
	)
	if err != nil && res == nil {
		_ = exporter.Shutdown(ctx)
		return nil, none, fmt.Errorf("telemetry: resource: %w", err)
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	shutdown = func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
		defer cancel()
		if err := provider.Shutdown(ctx); err != nil {
			return fmt.Errorf("telemetry: flushing spans: %w", err)
		}
		return nil
	}
	return provider, shutdown, nil
}
