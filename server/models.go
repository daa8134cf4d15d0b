package server

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/provider"
	"github.com/planner-engine/planner/llm/scripted"
)

// ErrModelUnavailable means the server cannot build the model a request
// needs because of how the server was started: the API key's environment
// variable of a real provider is not set in the server's environment. It
// is answered 503 with code model_unavailable: the request and the
// pipeline are fine, the server's configuration is not.
var ErrModelUnavailable = errors.New("model unavailable on this server")

// ErrSimNeedsTask means a run asked the simulator (a model of kind
// llm.KindSimulated) something that is not a task of a suite with a gold
// solution; the simulator plays nothing else, so the run is refused
// before its thread is created. It is answered 400 (it wraps
// ErrBadRequest).
var ErrSimNeedsTask = errors.New("the sim model plays only tasks of a suite with gold solutions")

// ModelInfo says what model a run uses and what kind of model it is, so
// that a page shows what the command line prints ("model: LABEL") and
// never has to guess.
type ModelInfo struct {
	// Spec is the model spec the run was started with ("sim",
	// "scripted:FILE", "openai:gpt-4o-mini"); "" when the run uses its
	// pipeline's own llm block.
	Spec string `json:"spec,omitempty"`
	// Provider is the model's provider ("sim", "scripted", "openai");
	// "" when it is unknown (the pipeline's config does not parse).
	Provider string `json:"provider,omitempty"`
	// Kind is the provider's llm.Kind: real, scripted, replayed or
	// simulated.
	Kind string `json:"kind"`
	// Offline is true for the kinds that are no real language model:
	// scripted, replayed and simulated.
	Offline bool `json:"offline"`
	// Mark is the kind in capitals for offline models (SIMULATED,
	// SCRIPTED, REPLAYED), "" for real ones: outputs show it on every
	// run of an offline model.
	Mark string `json:"mark,omitempty"`
	// Label is the provider's label, the words `planner run` prints
	// after "model: " (Engine.ModelLabel).
	Label string `json:"label"`
}

// modelInfo describes the model of cfg (a parsed spec, or a pipeline's
// llm block) as the engine registered its provider; spec is the request's
// or server's spec, "" for the pipeline's own block.
func (s *Server) modelInfo(cfg config.LLM, spec string) ModelInfo {
	if cfg.Provider == "" {
		return ModelInfo{Spec: spec, Kind: string(llm.KindReal), Label: "the pipeline's own llm block"}
	}
	k := s.engine.ModelKind(cfg.Provider)
	m := ModelInfo{Spec: spec, Provider: cfg.Provider, Kind: string(k), Offline: k.Offline(), Label: s.engine.ModelLabel(cfg.Provider)}
	if m.Offline {
		m.Mark = strings.ToUpper(string(k))
	}
	if k == llm.KindScripted && scripted.PlaysTaskReplies(cfg) {
		m.Label = scripted.TaskLabel // as `planner run` says of the per-task mode
	}
	return m
}

// runModel returns the model a run of meta uses: its spec (meta.LLM),
// else the llm block of its pipeline file. A config that does not parse
// gives a ModelInfo without a provider; loading the pipeline reports
// why.
func (s *Server) runModel(meta threadMeta) ModelInfo {
	if meta.LLM != "" {
		cfg, err := llm.ParseSpec(meta.LLM)
		if err != nil {
			return ModelInfo{Spec: meta.LLM, Kind: string(llm.KindReal), Label: meta.LLM}
		}
		return s.modelInfo(cfg, meta.LLM)
	}
	raw, err := readConfig(meta.Config)
	if err != nil {
		return s.modelInfo(config.LLM{}, "")
	}
	cfg, err := config.Parse(meta.Config, raw, os.LookupEnv)
	if err != nil {
		return s.modelInfo(config.LLM{}, "")
	}
	return s.modelInfo(cfg.LLM, "")
}

// defaultModel describes the model of runs and comparisons that name
// none: the server's (Config.LLM), or nil when each pipeline's own llm
// block is used.
func (s *Server) defaultModel() *ModelInfo {
	if s.cfg.LLM == "" {
		return nil
	}
	cfg, err := llm.ParseSpec(s.cfg.LLM)
	if err != nil {
		return &ModelInfo{Spec: s.cfg.LLM, Kind: string(llm.KindReal), Label: s.cfg.LLM}
	}
	m := s.modelInfo(cfg, s.cfg.LLM)
	return &m
}

// modelError classifies a failure to build a model for the API: a
// missing API key is the server's configuration, not the request's or
// the pipeline's (ErrModelUnavailable); other errors are returned as they
// are.
func modelError(err error) error {
	if errors.Is(err, provider.ErrMissingKey) && !errors.Is(err, ErrModelUnavailable) {
		return fmt.Errorf("%w: %w (a server configuration problem: set that variable in the environment of planner serve and restart it, or pick another model)",
			ErrModelUnavailable, err)
	}
	return err
}
