package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/graph"
	"github.com/planner-engine/planner/internal/textutil"
)

// PipelineInfo describes one config of the folder.
type PipelineInfo struct {
	// Name is the pipeline's `name:`; runs and comparisons name it.
	Name string `json:"name"`
	// File is the config's file name inside the folder.
	File string `json:"file"`
	// Description is its `description:`.
	Description string `json:"description,omitempty"`
	// Paradigm is the node types, in node order, joined by "+" ("react",
	// "planner+execute+replanner+finalizer").
	Paradigm string `json:"paradigm,omitempty"`
	// Nodes are its nodes with their types.
	Nodes []NodeInfo `json:"nodes,omitempty"`
	// Error says why the file does not load (file:line: message); the
	// other fields are then empty but File.
	Error string `json:"error,omitempty"`
}

// NodeInfo is a node of a pipeline.
type NodeInfo struct {
	// ID is the node's id.
	ID string `json:"id"`
	// Type is its node type.
	Type string `json:"type"`
}

// pipelineFiles lists the config files of the folder, sorted; dot files
// are skipped.
func (s *Server) pipelineFiles() ([]string, error) {
	var files []string
	for _, pat := range []string{"*.yaml", "*.yml"} {
		m, err := filepath.Glob(filepath.Join(s.cfg.Dir, pat))
		if err != nil {
			return nil, fmt.Errorf("configs folder %s: %w", s.cfg.Dir, err)
		}
		for _, f := range m {
			if !strings.HasPrefix(filepath.Base(f), ".") {
				files = append(files, f)
			}
		}
	}
	slices.Sort(files)
	return files, nil
}

// info loads one config for the listing.
func info(path string) PipelineInfo {
	pi := PipelineInfo{File: filepath.Base(path)}
	cfg, err := config.Load(path)
	if err != nil {
		pi.Error = err.Error()
		return pi
	}
	pi.Name, pi.Description = cfg.Name, textutil.OneLine(cfg.Description)
	types := make([]string, 0, len(cfg.Nodes))
	for _, n := range cfg.Nodes {
		pi.Nodes = append(pi.Nodes, NodeInfo{ID: n.ID, Type: n.Type})
		types = append(types, n.Type)
	}
	pi.Paradigm = strings.Join(types, "+")
	return pi
}

// nameRE matches the names a request may give a pipeline or a file:
// letters, digits, '.', '_' and '-', not starting with a punctuation mark,
// at most 128 characters.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// pipelinePath finds the config a request names: by its `name:`, or by
// its file name with or without the extension. Only files of the folder
// are found; anything else is ErrNotFound.
func (s *Server) pipelinePath(name string) (string, error) {
	if !nameRE.MatchString(name) {
		return "", withDetails(fmt.Errorf("%w: pipeline name %q: use letters, digits, '.', '_' and '-'", ErrBadRequest, name), map[string]string{"field": "config"})
	}
	files, err := s.pipelineFiles()
	if err != nil {
		return "", err
	}
	for _, f := range files {
		base := filepath.Base(f)
		if base == name || strings.TrimSuffix(strings.TrimSuffix(base, ".yaml"), ".yml") == name {
			return f, nil
		}
	}
	for _, f := range files {
		if cfg, err := config.Load(f); err == nil && cfg.Name == name {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w: no pipeline %q in %s (GET /api/pipelines lists them)", ErrNotFound, name, s.cfg.Dir)
}

func (s *Server) listPipelines(w http.ResponseWriter, r *http.Request) {
	files, err := s.pipelineFiles()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]PipelineInfo, 0, len(files))
	for _, f := range files {
		out = append(out, info(f))
	}
	body := map[string]any{"dir": s.cfg.Dir, "pipelines": out}
	if m := s.defaultModel(); m != nil {
		body["model"] = m // the model of runs and comparisons that name none
	}
	s.writeJSON(w, r, http.StatusOK, body)
}

// Problem is one problem of a pipeline file, at its line.
type Problem struct {
	// File is the file name (the posted name for a validated body).
	File string `json:"file"`
	// Line is the 1-based line, 0 when the problem has none.
	Line int `json:"line,omitempty"`
	// Key is the dotted key the problem is about, when known.
	Key string `json:"key,omitempty"`
	// Message is "file:line: message", as planner validate prints it.
	Message string `json:"message"`
}

// ValidateResult is the answer of POST /api/pipelines/validate.
type ValidateResult struct {
	// OK is true when the pipeline is valid.
	OK bool `json:"ok"`
	// Name is the pipeline's name, Nodes its nodes and Cycles its cycles
	// (legal, bounded by max_steps), when OK.
	Name   string     `json:"name,omitempty"`
	Nodes  []NodeInfo `json:"nodes,omitempty"`
	Cycles [][]string `json:"cycles,omitempty"`
	// Errors are the problems found, when not OK.
	Errors []Problem `json:"errors,omitempty"`
}

// validateRequest is the JSON form of a validation request.
type validateRequest struct {
	YAML string `json:"yaml"`
	File string `json:"file"`
}

// validatePipeline validates a posted pipeline: as if it were the file
// req.File of the configs folder, its ${VAR} references limited to
// Config.AllowEnv and its paths confined to the root (confiner), without
// starting what an mcp entry names. Validations are bounded in number
// (Config.MaxValidations: 429 past it) and time (Config.ValidateTimeout:
// 504 past it).
func (s *Server) validatePipeline(w http.ResponseWriter, r *http.Request) {
	var req validateRequest
	if isJSON(r.Header.Get("Content-Type")) {
		if err := decode(r, &req, false); err != nil {
			s.fail(w, r, err)
			return
		}
	} else {
		b, err := readBody(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		req.YAML, req.File = string(b), r.URL.Query().Get("file")
	}
	if req.File == "" {
		req.File = "pipeline.yaml"
	}
	if !nameRE.MatchString(req.File) {
		s.fail(w, r, fmt.Errorf("%w: file name %q: use letters, digits, '.', '_' and '-'", ErrBadRequest, req.File))
		return
	}
	if strings.TrimSpace(req.YAML) == "" {
		s.fail(w, r, fmt.Errorf("%w: no YAML to validate: post the pipeline as the body (Content-Type application/yaml) or as {\"yaml\": \"...\"}", ErrBadRequest))
		return
	}
	s.mu.Lock()
	closed := s.closed
	if !closed {
		select {
		case s.valSem <- struct{}{}:
			s.wg.Add(1)
		default:
			s.mu.Unlock()
			s.fail(w, r, fmt.Errorf("%w: %d validations are running (the server's limit); try again later", ErrBusy, cap(s.valSem)))
			return
		}
	}
	s.mu.Unlock()
	if closed {
		s.fail(w, r, ErrShuttingDown)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.ValidateTimeout)
	defer cancel()
	done := make(chan ValidateResult, 1)
	go func() { // it keeps its place in valSem until it has stopped, even past the timeout
		defer s.wg.Done()
		defer func() { <-s.valSem }()
		done <- s.validate(ctx, req)
	}()
	select {
	case res := <-done:
		s.writeJSON(w, r, http.StatusOK, res)
	case <-ctx.Done():
		if r.Context().Err() != nil {
			return // the client left
		}
		s.fail(w, r, fmt.Errorf("%w: the validation took longer than %s (the server's limit) and was stopped; a large corpus takes long to index", ErrTimeout, s.cfg.ValidateTimeout))
	}
}

// validate validates a posted pipeline; see validatePipeline.
func (s *Server) validate(ctx context.Context, req validateRequest) ValidateResult {
	dir, err := filepath.Abs(s.cfg.Dir)
	if err != nil {
		dir = s.cfg.Dir
	}
	path := filepath.Join(dir, req.File)
	bad := func(err error) ValidateResult { return ValidateResult{Errors: s.problems(err, path, req.File)} }
	cfg, err := config.ParseAllowed(path, []byte(req.YAML), s.cfg.AllowEnv, os.LookupEnv)
	if err != nil {
		return bad(err)
	}
	// Building a pipeline starts its MCP servers: a posted one must not
	// run a command on the server.
	for i, t := range cfg.Tools {
		if t.Name == config.MCPTool {
			return bad(cfg.Errorf(fmt.Sprintf("tools[%d]", i), nil, "tools[%d]: an mcp entry is not validated by the server "+
				"(building it would start the MCP server); check the file with planner validate", i))
		}
	}
	// A subgraph or map naming a pipeline file would load a file the
	// confinement below does not see, and start its tools.
	for i, n := range cfg.Nodes {
		if key := nestedFileKey(fmt.Sprintf("nodes[%d]", i), n.Settings); key != "" {
			return bad(cfg.Errorf(key, nil, "%s: a pipeline file run by a subgraph or map is not validated by the server "+
				"(it would load and build another file); inline it with graph:, or check the file with planner validate", key))
		}
	}
	scratch, err := os.MkdirTemp("", "planner-validate-")
	if err != nil {
		return bad(err)
	}
	defer os.RemoveAll(scratch)
	c := &confiner{ctx: ctx, root: s.realRoot, cfg: cfg, scratch: scratch, maxBytes: s.cfg.MaxValidateCorpusBytes}
	if err := cfg.MapPaths(c.check); err != nil {
		return bad(err)
	}
	p, err := s.engine.ValidateConfig(ctx, cfg)
	if err != nil {
		return bad(err)
	}
	defer p.Close()
	res := ValidateResult{OK: true, Name: p.Name(), Cycles: p.Graph().Cycles()}
	for _, id := range p.Graph().Nodes() {
		res.Nodes = append(res.Nodes, NodeInfo{ID: id, Type: p.Kinds()[id]})
	}
	return res
}

// problems lists the *config.Error values in err's tree (or err itself),
// with the pipeline's path replaced by the posted name and the server's
// root folder left out of the paths under it (they show relative to it).
func (s *Server) problems(err error, path, name string) []Problem {
	var pairs []string
	pairs = append(pairs, path, name)
	for _, root := range []string{s.realRoot, s.cfg.Root} {
		if filepath.Dir(root) != root { // not the file system's root
			pairs = append(pairs, root+string(filepath.Separator), "")
		}
	}
	rep := strings.NewReplacer(pairs...)
	var out []Problem
	var walk func(error)
	walk = func(e error) {
		var ce *config.Error
		if errors.As(e, &ce) {
			if j, ok := e.(interface{ Unwrap() []error }); ok && !isConfigError(e) {
				for _, sub := range j.Unwrap() {
					walk(sub)
				}
				return
			}
			out = append(out, Problem{File: name, Line: ce.Line, Key: ce.Key, Message: rep.Replace(ce.Error())})
			return
		}
		out = append(out, Problem{File: name, Message: rep.Replace(e.Error())})
	}
	walk(err)
	return out
}

func isConfigError(e error) bool {
	_, ok := e.(*config.Error)
	return ok
}

func (s *Server) pipelineGraph(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "svg"
	}
	if !slices.Contains([]string{"svg", "mermaid", "dot", "json"}, format) {
		s.fail(w, r, fmt.Errorf("%w: format must be svg, mermaid, dot or json, got %q", ErrBadRequest, format))
		return
	}
	path, err := s.pipelinePath(r.PathValue("name"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := s.engine.Validate(r.Context(), path)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer p.Close()
	g, kinds := p.Graph(), p.Kinds()
	switch format {
	case "svg":
		s.writeBody(w, r, http.StatusOK, "image/svg+xml", []byte(g.SVG(p.Name(), kinds, p.Nested()...)))
	case "mermaid":
		s.writeBody(w, r, http.StatusOK, "text/plain; charset=utf-8", []byte(g.Mermaid(kinds, p.Nested()...)))
	case "dot":
		s.writeBody(w, r, http.StatusOK, "text/plain; charset=utf-8", []byte(g.DOT(p.Name(), kinds, p.Nested()...)))
	default:
		type edge struct {
			From  string `json:"from"`
			To    string `json:"to"`
			Route string `json:"route,omitempty"`
		}
		var nodes []NodeInfo
		for _, id := range g.Nodes() {
			nodes = append(nodes, NodeInfo{ID: id, Type: kinds[id]})
		}
		var edges []edge
		for _, e := range g.Edges() {
			edges = append(edges, edge{e.From, e.To, e.Route})
		}
		s.writeJSON(w, r, http.StatusOK, map[string]any{"name": p.Name(), "nodes": nodes, "edges": edges, "start": graph.START, "end": graph.END})
	}
}

// nestedFileKey returns the key of the first setting named pipeline (a
// nested pipeline file) in settings or a mapping or list inside them,
// prefix naming settings; "" when there is none.
func nestedFileKey(prefix string, settings map[string]any) string {
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		key := prefix + "." + k
		switch v := settings[k].(type) {
		case string:
			if k == "pipeline" && strings.TrimSpace(v) != "" {
				return key
			}
		case map[string]any:
			if found := nestedFileKey(key, v); found != "" {
				return found
			}
		case []any:
			for j, e := range v {
				if m, ok := e.(map[string]any); ok {
					if found := nestedFileKey(fmt.Sprintf("%s[%d]", key, j), m); found != "" {
						return found
					}
				}
			}
		}
	}
	return ""
}
