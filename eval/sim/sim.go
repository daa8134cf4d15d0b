// Package sim is an oracle simulator model. It plays whichever node role
// calls it, in that role's real output format, by following the task's
// gold solution: the ReAct executor (text or native tool calls), the
// planner, re-planner and joiner, the finalizer and ReWOO solver, chain of
// thought (and self-consistency samples, Plan-and-Solve), the Tree of
// Thoughts proposer (numbered next steps: the gold next step among
// distractors; legal Game of 24 moves for Game of 24 tasks) and value
// evaluator (sure / likely / impossible), the Least-to-Most decomposer
// (numbered sub-questions derived from the gold steps) and sub-question
// solver (which needs the earlier answers in its prompt), and Reflexion's
// judge (PASS / FAIL against the gold answer, never revealing it) and
// self-reflection (a lesson naming the gold plan), and the Graph of
// Thoughts list roles of llm nodes (role: sort and role: merge): sort
// replies with the last JSON list of integers of the last user message,
// sorted ascending, and merge with the last two such lists merged into one
// sorted list, reading the lists from the prompt rather than the gold
// solution. It injects faults at seeded rates, where they make sense for
// the role (a sort error, one dropped, duplicated or swapped element, only
// in sort and merge replies), and sleeps per a latency model. It exists so
// that comparisons, recovery paths and parallel speed can be exercised
// offline.
//
// Its capabilities are SIMULATED, modelled from the task's gold steps and
// a small profile per task type (capabilities.yaml; the gold "type", else
// inferred from the steps: knowledge, lookup, arithmetic, multihop,
// puzzle), never from the paradigm's or node's name. A reply that states
// the task's answer (the answering roles: direct, chain of thought,
// self-consistency samples, Plan-and-Solve; ReAct's final answer; the
// planner's answer step of a task without tool steps; a plan worker's
// answer to it) is right only as far as its prompt's evidence and the
// model's memory allow: each lookup step (any tool but the calculator)
// needs its gold output in the prompt, or else the model must know the
// task (drawn once per seed and task with the gold "memory" prior, else
// the type's; 0 for lookups), and a task without steps is answered from
// memory the same way; each calculator step whose result the prompt does
// not show slips with the type's rate, drawn per call (a lower rate when
// the prompt asks to reason step by step); a puzzle is solved in one reply
// with its prior, per call, unless the prompt shows the derivation. The
// Tree of Thoughts proposer and the Least-to-Most sub-question solver
// state gold steps under the same rules, one step at a time; Game of 24
// moves are not limited, as the search over legal moves is what solves a
// puzzle. A wrong reply is plausible and varies between samples of one
// request (another task's answer, a nearby number, an expression that is
// not 24), so self-consistency and agreement checks can detect it. The
// evidence-bound roles below (finalizer, solver, re-planner, joiner)
// read the step results in their prompts, so paradigms that gather
// evidence answer what one-reply paradigms cannot. OracleCapabilities
// (WithCapabilities) restores an all-knowing, never-slipping model for
// tests of a role's format.
//
// The simulator is given the suite's tasks with their gold solutions
// (WithTasks) and plays the one whose id the call's llm.CallMeta names. The
// roles are recognised from the caller's node kind and role (also
// llm.CallMeta); the paradigm roles also read labels of the nodes' default
// prompts ("Steps so far:", "Candidate ...:", "Sub-question:", "Proposed
// answer:"), so custom prompts without them get generic replies, and the
// planner role finds the plan executor's model worker in the prompt's tool
// list by its description, as a model would. It imports no node package.
//
// Its accuracy numbers describe the engine's handling of faults, never the
// quality of any language model; every output that uses it says
// "simulated".
package sim

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/planner-engine/planner/config"
	"github.com/planner-engine/planner/eval/suite"
	"github.com/planner-engine/planner/llm"
	"github.com/planner-engine/planner/llm/middleware"
	"github.com/tmc/langchaingo/llms"
	"gopkg.in/yaml.v3"
)

// Label is how outputs name this model.
const Label = "sim: SIMULATED oracle following each task's gold solution (measures the engine, not a model)"

//go:embed profiles.yaml
var profilesYAML []byte

// Sentinel errors.
var (
	// ErrNoGold means the call's task is not one the simulator was given
	// (WithTasks), or has no gold solution to follow.
	// It matches middleware.ErrPermanent: a retry would fail the same way.
	ErrNoGold = middleware.Permanent("sim: the task has no gold solution; the sim model plays only tasks of a suite with gold solutions " +
		"(planner run --suite SUITE --task ID, planner compare --suite SUITE); otherwise use a real model or scripted:FILE")
	// ErrUnknownProfile means no profile has the requested name.
	ErrUnknownProfile = errors.New("sim: unknown profile")
	// ErrSimulatedHTTP is wrapped by injected HTTP failures.
	ErrSimulatedHTTP = errors.New("sim: simulated HTTP failure")
)

// Fault kinds the simulator injects.
const (
	FaultMalformedAction     = "malformed_action"
	FaultFullwidthColon      = "fullwidth_colon"
	FaultInventedObservation = "invented_observation"
	FaultUnknownTool         = "unknown_tool"
	FaultRepeatedAction      = "repeated_action"
	FaultEarlyWrongAnswer    = "early_wrong_answer"
	FaultEmptyReply          = "empty_reply"
	FaultHTTP429             = "http_429"
	FaultHTTP500             = "http_500"
	// FaultSortError puts one error into the list a sort or merge role
	// replies with: an element dropped, an element duplicated, or two
	// adjacent unequal elements swapped. It applies to those roles only.
	FaultSortError = "sort_error"
)

// FaultKinds lists every fault kind in a fixed order. A draw walks the
// profile's rates in this order, so a kind added at the end leaves the
// draws of the others as they were.
func FaultKinds() []string {
	return []string{FaultMalformedAction, FaultFullwidthColon, FaultInventedObservation, FaultUnknownTool,
		FaultRepeatedAction, FaultEarlyWrongAnswer, FaultEmptyReply, FaultHTTP429, FaultHTTP500, FaultSortError}
}

// Latency is the simulated time of one call: Base + PerPromptToken*prompt
// + PerCompletionToken*completion, times (1 ± Jitter).
type Latency struct {
	Base               time.Duration `yaml:"base"`
	PerPromptToken     time.Duration `yaml:"per_prompt_token"`
	PerCompletionToken time.Duration `yaml:"per_completion_token"`
	Jitter             float64       `yaml:"jitter"`
}

// Profile is a named fault and latency setting.
type Profile struct {
	Name        string             `yaml:"-"`
	Description string             `yaml:"description"`
	Latency     Latency            `yaml:"latency"`
	Faults      map[string]float64 `yaml:"faults"`
}

// Profiles returns the built-in profiles by name.
func Profiles() (map[string]Profile, error) {
	var ps map[string]Profile
	if err := yaml.Unmarshal(profilesYAML, &ps); err != nil {
		return nil, fmt.Errorf("sim: built-in profiles: %w", err)
	}
	for name, p := range ps {
		p.Name = name
		if err := p.validate(); err != nil {
			return nil, err
		}
		ps[name] = p
	}
	return ps, nil
}

// ProfileNames lists the built-in profile names, sorted.
func ProfileNames() []string {
	ps, _ := Profiles()
	out := make([]string, 0, len(ps))
	for n := range ps {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (p Profile) validate() error {
	total := 0.0
	for k, v := range p.Faults {
		known := false
		for _, f := range FaultKinds() {
			known = known || f == k
		}
		if !known {
			return fmt.Errorf("sim: profile %q: unknown fault %q (known: %s)", p.Name, k, strings.Join(FaultKinds(), ", "))
		}
		if v < 0 || v > 1 {
			return fmt.Errorf("sim: profile %q: fault %q rate %v outside [0,1]", p.Name, k, v)
		}
		total += v
	}
	if total > 1 {
		return fmt.Errorf("sim: profile %q: fault rates add up to %v > 1", p.Name, total)
	}
	return nil
}

// Model is the simulator. It is safe for concurrent use.
type Model struct {
	profile Profile
	seed    uint64
	sleep   func(ctx context.Context, d time.Duration) error
	tasks   map[string]*suite.Task
	caps    map[string]Capability
	// answers are the distinct gold answers of the tasks, sorted: the
	// plausible wrong answers of replies from memory.
	answers []string

	mu       sync.Mutex
	attempts map[uint64]int
	injected map[string]int
	calls    int
}

var _ llms.Model = (*Model)(nil)

// Option configures the simulator.
type Option func(*Model)

// WithTasks gives the simulator the suite's tasks, with their gold
// solutions, keyed by task id: a call plays the task whose id is in its
// llm.CallMeta. A call for a task it was not given, or one without a gold
// solution, fails with ErrNoGold. Options accumulate; a later task of the
// same id wins.
func WithTasks(tasks []suite.Task) Option {
	return func(m *Model) {
		if m.tasks == nil {
			m.tasks = make(map[string]*suite.Task, len(tasks))
		}
		for i := range tasks {
			t := tasks[i]
			m.tasks[t.ID] = &t
		}
	}
}

// WithSeed sets the seed of fault draws. Default 1.
func WithSeed(seed uint64) Option { return func(m *Model) { m.seed = seed } }

// WithSleeper replaces the latency sleep (tests). Default: a timer that
// honours ctx.
func WithSleeper(f func(ctx context.Context, d time.Duration) error) Option {
	return func(m *Model) { m.sleep = f }
}

// New returns a simulator with the named built-in profile ("" = perfect).
func New(profile string, opts ...Option) (*Model, error) {
	if profile == "" {
		profile = "perfect"
	}
	ps, err := Profiles()
	if err != nil {
		return nil, err
	}
	p, ok := ps[profile]
	if !ok {
		names := ProfileNames()
		return nil, fmt.Errorf("%w %q (%sprofiles: %s)", ErrUnknownProfile, profile, config.DidYouMean(profile, names), strings.Join(names, ", "))
	}
	return NewWithProfile(p, opts...)
}

// NewWithProfile returns a simulator with a custom profile.
func NewWithProfile(p Profile, opts ...Option) (*Model, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	caps, err := Capabilities()
	if err != nil {
		return nil, err
	}
	m := &Model{profile: p, seed: 1, sleep: middleware.Sleep, caps: caps, attempts: map[uint64]int{}, injected: map[string]int{}}
	for _, o := range opts {
		o(m)
	}
	seen := map[string]bool{}
	for _, t := range m.tasks {
		if t.Gold != nil && strings.TrimSpace(t.Gold.Answer) != "" && !seen[t.Gold.Answer] {
			seen[t.Gold.Answer] = true
			m.answers = append(m.answers, t.Gold.Answer)
		}
	}
	sort.Strings(m.answers)
	return m, nil
}

// Injected returns how many faults of each kind were injected so far.
func (m *Model) Injected() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.injected)
}

// Calls returns the number of calls served.
func (m *Model) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

// Call implements llms.Model.
func (m *Model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// call describes one request as the simulator sees it.
type call struct {
	caller   llm.CallMeta
	task     *suite.Task
	stepID   string
	prompt   string
	msgs     []llms.MessageContent
	opts     llms.CallOptions
	progress int
	// bits are the fault draw's random bits, which choose a fault's
	// details (draw).
	bits uint64
	// dice are the call's capability draws (slips, one-reply puzzle
	// solutions, which wrong answer).
	dice dice
}

// GenerateContent answers in the calling role's format.
func (m *Model) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	meta := llm.CallMetaFrom(ctx)
	c := call{caller: meta, task: m.tasks[meta.TaskID], stepID: meta.StepID, msgs: msgs}
	for _, o := range options {
		o(&c.opts)
	}
	if c.task == nil || c.task.Gold == nil {
		return nil, ErrNoGold
	}
	c.prompt = llm.MessagesText(msgs, "Observation: ")
	c.progress = progress(c)
	c.dice = m.roll(c)

	fault, bits := m.draw(c)
	c.bits = bits
	m.mu.Lock()
	m.calls++
	if fault != "" {
		m.injected[fault]++
	}
	m.mu.Unlock()

	switch fault {
	case FaultHTTP429:
		return nil, m.httpFault(ctx, http.StatusTooManyRequests)
	case FaultHTTP500:
		return nil, m.httpFault(ctx, http.StatusInternalServerError)
	}
	choice := m.respond(c, fault)
	wait := m.latency(c, choice)
	if c.opts.StreamingFunc != nil && choice.Content != "" {
		if err := m.stream(ctx, c.opts.StreamingFunc, choice.Content, wait); err != nil {
			return nil, err
		}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}, nil
	}
	if err := m.sleep(ctx, wait); err != nil {
		return nil, err
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}, nil
}

// stream sends text to fn the way a streaming server does within the
// call's latency: the time per completion token of the profile goes to
// writing the reply, a token (about 4 bytes) at a time, and the rest
// comes before the first token. Tokens are sent in groups of at least a
// millisecond's worth, so the sleeps stay coarse. Without a per-token
// time the reply comes as one chunk after the whole wait.
func (m *Model) stream(ctx context.Context, fn func(context.Context, []byte) error, text string, wait time.Duration) error {
	var chunks []string
	for len(text) > 0 {
		n := min(4, len(text))
		for n < len(text) && !utf8.RuneStart(text[n]) {
			n++
		}
		chunks = append(chunks, text[:n])
		text = text[n:]
	}
	per := m.profile.Latency.PerCompletionToken
	gen := min(time.Duration(len(chunks))*per, wait)
	if per <= 0 || gen <= 0 {
		chunks, gen = []string{strings.Join(chunks, "")}, 0
	}
	if err := m.sleep(ctx, wait-gen); err != nil {
		return err
	}
	group := 1
	if per > 0 && per < time.Millisecond {
		group = int((time.Millisecond + per - 1) / per)
	}
	step := gen / time.Duration(max((len(chunks)+group-1)/group, 1))
	for i := 0; i < len(chunks); i += group {
		if gen > 0 {
			if err := m.sleep(ctx, step); err != nil {
				return err
			}
		}
		if err := fn(ctx, []byte(strings.Join(chunks[i:min(i+group, len(chunks))], ""))); err != nil {
			return fmt.Errorf("sim: streaming: %w", err)
		}
	}
	return nil
}

// httpFault waits the base latency, as a server answering with an error
// does, and returns the status as an HTTP failure; if ctx ends first it
// returns ctx's error instead.
func (m *Model) httpFault(ctx context.Context, status int) error {
	if err := m.sleep(ctx, m.profile.Latency.Base); err != nil {
		return err
	}
	return &middleware.HTTPError{StatusCode: status,
		Err: fmt.Errorf("%w: %d %s", ErrSimulatedHTTP, status, http.StatusText(status))}
}
