package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/planner-engine/planner"
	"github.com/planner-engine/planner/journal"
)

// KindTurn is the kind of a run that answers a follow-up question on a
// thread (POST /api/threads/{name}/turns).
const KindTurn = "turn"

// TurnRequest is the body of POST /api/threads/{name}/turns.
type TurnRequest struct {
	// Question is the follow-up. Required.
	Question string `json:"question"`
}

// addTurn answers POST /api/threads/{name}/turns: a follow-up question
// on a finished conversation runs as its next turn.
func (s *Server) addTurn(w http.ResponseWriter, r *http.Request) {
	var req TurnRequest
	if err := decode(r, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	acc, err := s.followUp(r.Context(), r.PathValue("name"), req.Question)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusAccepted, acc)
}

// FollowUp asks question as the next turn of the conversation thread
// holds (planner.FollowUp): the turn is a new thread, NAME.turnN, that
// sees the earlier turns' questions and answers, run with the
// conversation's pipeline and model. ErrNotFound for no such thread,
// ErrConflict when its latest turn is not done.
func (s *Server) FollowUp(ctx context.Context, thread, question string) (*Call, error) {
	acc, err := s.followUp(ctx, thread, question)
	if err != nil {
		return nil, err
	}
	return s.callOf(acc)
}

func (s *Server) followUp(ctx context.Context, name, question string) (Accepted, error) {
	question = strings.TrimSpace(question)
	if question == "" {
		return Accepted{}, withDetails(fmt.Errorf("%w: question is required: the follow-up to ask", ErrBadRequest), map[string]string{"field": "question"})
	}
	if _, _, err := s.threadOf(ctx, name); err != nil {
		return Accepted{}, err
	}
	th, err := planner.FollowUp(ctx, s.store, name, question)
	switch {
	case errors.Is(err, planner.ErrTurnNotDone):
		return Accepted{}, fmt.Errorf("%w: %w", ErrConflict, err)
	case errors.Is(err, journal.ErrExists):
		return Accepted{}, fmt.Errorf("%w: %w", ErrConflict, err)
	case err != nil:
		return Accepted{}, err
	}
	th, meta, err := s.threadOf(ctx, th.Name)
	if err != nil {
		return Accepted{}, err
	}
	return s.launch(s.resumeLaunch(th, meta, KindTurn))
}
