package planner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm/cassette"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/tmc/langchaingo/llms"
)

// modelInfoKey is the GenerationInfo key under which a recorded response
// names the model that produced it (the scripted model sets it too). A
// replay reads it back so that the replayed run is priced like the recorded
// one.
const modelInfoKey = "model"

// ErrRecording marks a failure to prepare or finish the WithRecording
// cassette.
var ErrRecording = errors.New("cannot record the cassette")

// recording is an Engine's cassette. Every model the Engine builds while
// recording sends its calls through the one cassette.Recorder, so that the
// cassette has a single call numbering and a single writer. A Recorder wraps
// one model; to serve several, it wraps a router that forwards each call to
// the model that recording.wrap places in the call's context.
type recording struct {
	path string
	file *lazyFile
	rec  *cassette.Recorder
}

// lazyFile creates its file on the first write, so that a run that fails
// before any model call (a usage or config error) leaves an existing
// cassette at that path alone.
type lazyFile struct {
	path string
	mu   sync.Mutex // guards f and closed
	f    *os.File
	// closed is set by Close; later writes fail.
	closed bool
}

func (l *lazyFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, os.ErrClosed
	}
	if l.f == nil {
		f, err := os.Create(l.path)
		if err != nil {
			return 0, err
		}
		l.f = f
	}
	return l.f.Write(p)
}

// created reports whether the file was written.
func (l *lazyFile) created() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f != nil
}

func (l *lazyFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

// newRecording prepares the cassette at path. The file itself is created
// by the first recorded call; its folder must exist now.
func newRecording(path string) (*recording, error) {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrRecording, path, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%w: %s: %s is not a folder", ErrRecording, path, dir)
	}
	file := &lazyFile{path: path}
	return &recording{path: path, file: file, rec: cassette.NewRecorder(nil, file)}, nil
}

// wrap returns m recorded into the shared cassette. Successful responses
// are labelled with cfg.Model (under modelInfoKey, unless the provider set
// it) before they are recorded.
func (r *recording) wrap(cfg config.LLM, m llms.Model) llms.Model {
	named := m
	if cfg.Model != "" {
		named = middleware.Wrap(m, func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
			resp, err := m.GenerateContent(ctx, msgs, opts...)
			if err == nil && resp != nil {
				for _, ch := range resp.Choices {
					if ch == nil {
						continue
					}
					if ch.GenerationInfo == nil {
						ch.GenerationInfo = map[string]any{}
					}
					if _, ok := ch.GenerationInfo[modelInfoKey]; !ok {
						ch.GenerationInfo[modelInfoKey] = cfg.Model
					}
				}
			}
			return resp, err
		})
	}
	recorded := r.rec.Through(named)
	return middleware.Wrap(named, func(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
		return recorded.GenerateContent(ctx, msgs, opts...)
	})
}

func (r *recording) close() error {
	err := r.rec.Close()
	if ferr := r.file.Close(); ferr != nil && err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRecording, r.path, err)
	}
	return nil
}

// replays holds the cassettes opened by the replay provider, one Replayer
// per file for the whole Engine, so that every model replaying a file (the
// pipeline's and any node-level one) draws from the same recordings.
type replays struct {
	mu   sync.Mutex
	open map[string]*cassette.Replayer
}

func newReplays() *replays { return &replays{open: map[string]*cassette.Replayer{}} }

// get returns the Replayer for path, opening it on first use.
func (r *replays) get(path string) (*cassette.Replayer, error) {
	key, err := filepath.Abs(path)
	if err != nil {
		key = path
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.open[key]; ok {
		return p, nil
	}
	p, err := cassette.OpenReplay(path)
	if err != nil {
		return nil, err
	}
	r.open[key] = p
	return p, nil
}

// unused sums the recordings not yet played back.
func (r *replays) unused() int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, p := range r.open {
		n += p.Remaining()
	}
	return n
}

// fillReplayModel sets cfg.Model, for a replay block that names none, to the
// one model the cassette's responses name, so the replayed calls are priced
// like the recorded ones. Cassettes naming no model or several leave cfg
// unchanged; unreadable ones too (building the replay model reports them).
func fillReplayModel(cfg *config.LLM, baseDir string) {
	if cfg.Provider != "replay" || cfg.Model != "" || cfg.Script == "" {
		return
	}
	path := cfg.Script
	if !filepath.IsAbs(path) && baseDir != "" {
		path = filepath.Join(baseDir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	entries, err := cassette.ReadEntries(f)
	if err != nil {
		return
	}
	model := ""
	for _, e := range entries {
		if e.Response == nil {
			continue
		}
		for _, ch := range e.Response.Choices {
			name, _ := ch.GenerationInfo[modelInfoKey].(string)
			switch {
			case name == "" || name == model:
			case model == "":
				model = name
			default:
				return // several models: no single price applies
			}
		}
	}
	cfg.Model = model
}
