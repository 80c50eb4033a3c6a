package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/wunder/wunder/orchestrator"
)

// The approval routes: a run waiting for a person lists what it asks, and
// a decision (or an answer to its question) resumes it
// (orchestrator/approval.go, orchestrator/question.go).
//
//	GET  /wunder/runs/{run_id}/approvals                -> {"approvals":[...]} (questions among them, kind "question")
//	POST /wunder/runs/{run_id}/approvals/{approval_id}  {"decision","arguments","reason","answer"} -> the decided approval
//	POST /wunder/runs/{run_id}/input                    {"answer","question_id"?} -> the answered question
//	GET  /wunder/pending?limit=&cursor=                 -> {"runs":[{"run","pending":[...]}],"count","next_cursor"}
func (s *Server) approvalRoutes() {
	s.mux.HandleFunc("GET /wunder/pending", s.handlePending)
	s.mux.HandleFunc("GET /wunder/runs/{run_id}/approvals", s.handleListApprovals)
	s.mux.HandleFunc("POST /wunder/runs/{run_id}/approvals/{approval_id}", s.handleDecide)
	s.mux.HandleFunc("POST /wunder/runs/{run_id}/input", s.handleAnswer)
}

type approvalsResponse struct {
	Approvals []*orchestrator.Approval `json:"approvals"`
}

func (s *Server) handleListApprovals(w http.ResponseWriter, r *http.Request) {
	userID, err := scope(r, r.URL.Query().Get("user_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	list, err := s.b.Approvals(r.Context(), userID, r.PathValue("run_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if list == nil {
		list = []*orchestrator.Approval{}
	}
	writeJSON(w, r, http.StatusOK, approvalsResponse{Approvals: list})
}

// Bounds of GET /wunder/pending: each run listed costs a read of its
// approvals.
const (
	pendingDefaultLimit = 20
	pendingMaxLimit     = 100
)

// handlePending is GET /wunder/pending: the caller's runs that wait for a
// decision or an answer (newest first, paged by cursor), each with its
// pending approvals and questions, and count, how many those are on this
// page.
func (s *Server) handlePending(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	userID, err := scope(r, q.Get("user_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	limit, err := queryInt(r, "limit", pendingDefaultLimit, pendingMaxLimit)
	if err != nil {
		writeError(w, r, fmt.Errorf("%w: %v", orchestrator.ErrInvalidArgument, err))
		return
	}
	if limit == 0 {
		limit = pendingDefaultLimit
	}
	page, err := orchestrator.NewPager("cursor", q.Get("cursor"), limit, "pending", userID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	list, err := s.b.Pending(r.Context(), userID, page.Page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	list, next := orchestrator.CutPage(page, list, orchestrator.PendingKey)
	count := 0
	for _, p := range list {
		count += len(p.Pending)
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"runs": list, "count": count, "next_cursor": next})
}

// decideRequest is the body of a decision.
type decideRequest struct {
	Decision  string          `json:"decision"`
	Arguments json.RawMessage `json:"arguments"`
	Answer    json.RawMessage `json:"answer"`
	Reason    string          `json:"reason"`
	UserID    string          `json:"user_id"`
}

func (s *Server) handleDecide(w http.ResponseWriter, r *http.Request) {
	var req decideRequest
	if !decodeJSON(w, r, &req) {
		return
	}
	userID, ok := namedScope(w, r, req.UserID)
	if !ok {
		return
	}
	if req.Decision == "" {
		writeProblem(w, r, http.StatusBadRequest, "missing_decision", `decision is required: "approve", "edit", "reject" or "cancel" (a question: "answer" or "cancel")`)
		return
	}
	a, err := s.b.Decide(r.Context(), userID, r.PathValue("run_id"), r.PathValue("approval_id"),
		orchestrator.ApprovalDecision{Decision: req.Decision, Arguments: req.Arguments, Answer: req.Answer, Reason: req.Reason})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, a)
}

// answerRequest is the body of an answer to a run's question.
type answerRequest struct {
	// Answer is a string, or a list of strings for a multiple choice.
	Answer json.RawMessage `json:"answer"`
	// QuestionID names the question; "" = the run's one pending question.
	QuestionID string `json:"question_id"`
	UserID     string `json:"user_id"`
}

func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request) {
	var req answerRequest
	if !decodeJSON(w, r, &req) {
		return
	}
	userID, ok := namedScope(w, r, req.UserID)
	if !ok {
		return
	}
	if len(req.Answer) == 0 || string(req.Answer) == "null" {
		writeProblem(w, r, http.StatusBadRequest, "missing_answer", `answer is required: a string, or a list of strings for a multiple choice`)
		return
	}
	a, err := s.b.Answer(r.Context(), userID, r.PathValue("run_id"), req.QuestionID, req.Answer)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, a)
}
