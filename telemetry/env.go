package telemetry

import (
	"os"
	"strconv"
	"strings"
)

// The environment variables ContentFromEnv reads. The exporter's
// variables (OTEL_EXPORTER_OTLP_ENDPOINT, ...) are read by package
// telemetry/otlp, which builds the TracerProvider they describe.
const (
	// EnvContent set to 1 or true records content (WithContent).
	EnvContent = "PLANNER_OTEL_CONTENT"
	// EnvCaptureContent is the GenAI instrumentations' switch for the
	// same; true records content.
	EnvCaptureContent = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
)

// ContentFromEnv reports whether the environment opts in to recording
// content: PLANNER_OTEL_CONTENT=1 (or true) or
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
func ContentFromEnv() bool {
	return isTrue(os.Getenv(EnvContent)) || isTrue(os.Getenv(EnvCaptureContent))
}

func isTrue(v string) bool {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && b
}
