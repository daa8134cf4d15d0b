package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/journal"
)

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	// Error says what went wrong.
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is an error: a stable code for programs, a message for
// people, and details where there are some (file:line problems of a
// pipeline, the field a request got wrong).
type ErrorDetail struct {
	// Code is one of bad_request, invalid_config, unauthorized,
	// forbidden, not_found, method_not_allowed, conflict, too_large,
	// busy, shutting_down, timeout, model_unavailable (the server cannot
	// build the model: its API key's environment variable is not set on
	// the server), internal.
	Code string `json:"code"`
	// Message explains the error, scrubbed of secrets.
	Message string `json:"message"`
	// Details holds structured details, when the error has some.
	Details any `json:"details,omitempty"`
}

// detailedError carries details for the error body.
type detailedError struct {
	err     error
	details any
}

func (e *detailedError) Error() string { return e.err.Error() }
func (e *detailedError) Unwrap() error { return e.err }

// withDetails attaches details to err's error body.
func withDetails(err error, details any) error { return &detailedError{err: err, details: details} }

// errorStatus maps an error to its HTTP status and code.
func errorStatus(err error) (int, string) {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe), errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge, "too_large"
	case errors.Is(err, ErrUnauthorized):
		return http.StatusUnauthorized, "unauthorized"
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden, "forbidden"
	case errors.Is(err, ErrNotFound), errors.Is(err, journal.ErrNotFound):
		return http.StatusNotFound, "not_found"
	case errors.Is(err, ErrConflict), errors.Is(err, journal.ErrExists), errors.Is(err, journal.ErrLocked):
		return http.StatusConflict, "conflict"
	case errors.Is(err, ErrBusy):
		return http.StatusTooManyRequests, "busy"
	case errors.Is(err, ErrShuttingDown):
		return http.StatusServiceUnavailable, "shutting_down"
	case errors.Is(err, ErrTimeout):
		return http.StatusGatewayTimeout, "timeout"
	case errors.Is(err, ErrModelUnavailable):
		return http.StatusServiceUnavailable, "model_unavailable"
	case errors.Is(err, config.ErrInvalid):
		return http.StatusUnprocessableEntity, "invalid_config"
	case errors.Is(err, ErrBadRequest), errors.Is(err, journal.ErrBadName), errors.Is(err, journal.ErrNoCheckpoint):
		return http.StatusBadRequest, "bad_request"
	}
	return http.StatusInternalServerError, "internal"
}

// fail answers err as a JSON error, scrubbed.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	err = modelError(err) // a missing API key is the server's configuration, wherever it shows
	code, name := errorStatus(err)
	body := ErrorBody{Error: ErrorDetail{Code: name, Message: err.Error()}}
	var de *detailedError
	if errors.As(err, &de) {
		body.Error.Details = de.details
	}
	s.writeJSON(w, r, code, body)
}

// writeJSON answers v as JSON with status code. The encoded body passes
// through the scrubber as a last guard: no secret reaches a client even
// where a field was not scrubbed on its way.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		b, _ = json.Marshal(ErrorBody{Error: ErrorDetail{Code: "internal", Message: "encoding the response: " + err.Error()}})
	}
	b = []byte(s.scrub.String(string(b)))
	s.writeBody(w, r, code, "application/json", append(b, '\n'))
}

// writeBody answers body with a write deadline.
func (s *Server) writeBody(w http.ResponseWriter, _ *http.Request, code int, contentType string, body []byte) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// readBody reads r's body: a body past the server's size limit is
// ErrTooLarge, any other failure to read it ErrBadRequest.
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, fmt.Errorf("%w: more than %d bytes: %w", ErrTooLarge, mbe.Limit, err)
		}
		return nil, fmt.Errorf("%w: reading the body: %w", ErrBadRequest, err)
	}
	return b, nil
}

// decode reads r's JSON body into v strictly: one object, no unknown
// fields, the right types, nothing after it. An empty body decodes as {}
// when allowEmpty.
func decode(r *http.Request, v any, allowEmpty bool) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !isJSON(ct) {
		return fmt.Errorf("%w: Content-Type must be application/json, got %q", ErrBadRequest, ct)
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if allowEmpty {
			return nil
		}
		return fmt.Errorf("%w: the body must be a JSON object", ErrBadRequest)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return withDetails(fmt.Errorf("%w: field %q must be %s, got a JSON %s", ErrBadRequest, te.Field, te.Type, te.Value), map[string]string{"field": te.Field})
		}
		return fmt.Errorf("%w: invalid JSON body: %w", ErrBadRequest, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: the body must hold one JSON object and nothing after it", ErrBadRequest)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: the body must hold one JSON object and nothing after it", ErrBadRequest)
	}
	return nil
}

// isJSON reports whether a Content-Type is JSON.
func isJSON(ct string) bool {
	mt := ct
	for i, c := range ct {
		if c == ';' {
			mt = ct[:i]
			break
		}
	}
	return bytes.EqualFold(bytes.TrimSpace([]byte(mt)), []byte("application/json"))
}
