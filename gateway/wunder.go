package gateway

import (
	"encoding/json"
	"errors"

	"net/http"

	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
)

// wunderRequest is the body of POST /wunder and POST /wunder/runs.
type wunderRequest struct {
	UserID    string   `json:"user_id"`
	Question  string   `json:"question"`
	ToolNames []string `json:"tool_names"`
	// PreloadSkills are skills loaded from the start.
	PreloadSkills []string `json:"preload_skills"`
	Stream        *bool    `json:"stream"`
	SessionID     string   `json:"session_id"`
	ModelName     string   `json:"model_name"`
	ToolCallMode  string   `json:"tool_call_mode"`
	Language      string   `json:"language"`
	MaxRounds     int      `json:"max_rounds"`
	// ApprovalMode: suggest, auto_edit or full_auto (approvals.mode when
	// empty).
	ApprovalMode string `json:"approval_mode"`
	// SkipToolCalls: answer without tools (overrides.go).
	SkipToolCalls bool `json:"skip_tool_calls"`
	// ConfigOverrides: per-request model settings (overrides.go).
	ConfigOverrides map[string]json.RawMessage `json:"config_overrides"`
	// Attachments: {type, name, content, mime_type}, content text for
	// type text and a data URL for file and image (attachments.go).
	Attachments []attachmentIn `json:"attachments"`
}

// attachmentIn is one attachments entry as clients send it.
type attachmentIn struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	Content  string `json:"content"`
	MimeType string `json:"mime_type"`
}

// wunderResponse is the non-streaming answer of POST /wunder.
type wunderResponse struct {
	SessionID  string                  `json:"session_id"`
	RunID      string                  `json:"run_id"`
	State      orchestrator.RunState   `json:"state"`
	Answer     string                  `json:"answer"`
	Usage      orchestrator.Usage      `json:"usage"`
	StopReason orchestrator.StopReason `json:"stop_reason"`
	Error      string                  `json:"error,omitempty"`
	// Approvals, when the run waits for them (state waiting_approval): decide
	// each with POST /wunder/runs/{run_id}/approvals/{approval_id}.
	Approvals []*orchestrator.Approval `json:"approvals,omitempty"`
	// Questions, when the run asks the user (state waiting_input): answer
	// with POST /wunder/runs/{run_id}/input.
	Questions []orchestrator.UserInputRequiredData `json:"questions,omitempty"`
	// Artifacts are what the run attached to its result (the artifact
	// tool), as its final event lists them.
	Artifacts []orchestrator.ArtifactData `json:"artifacts,omitempty"`
	// A2UI are the A2UI batches the run sent (the a2ui tool), as its
	// final event lists them.
	A2UI []orchestrator.A2UIData `json:"a2ui,omitempty"`
}

// pausedResponse is the answer of a run that waits: its approvals and its
// questions apart, and its usage so far.
func pausedResponse(run *orchestrator.Run, st orchestrator.Waited) wunderResponse {
	resp := wunderResponse{SessionID: run.SessionID, RunID: run.ID, State: st.Run.State, Usage: st.Run.Usage}
	for _, a := range st.Approvals {
		if a.Kind == orchestrator.KindQuestion {
			resp.Questions = append(resp.Questions, orchestrator.QuestionView(a))
			continue
		}
		resp.Approvals = append(resp.Approvals, a)
	}
	return resp
}

// start decodes a run request, starts the run and writes any failure. It
// returns r with the messages' language of the body (i18n.go), for what
// the caller writes next.
func (s *Server) start(w http.ResponseWriter, r *http.Request, submit bool) (*orchestrator.Run, *wunderRequest, *http.Request, bool) {
	var req wunderRequest
	if !decodeJSON(w, r, &req) {
		return nil, nil, r, false
	}
	r = s.withBodyLanguage(r, req.Language)
	userID, err := scope(r, req.UserID)
	if err != nil {
		writeError(w, r, err)
		return nil, nil, r, false
	}
	if userID == "" {
		writeProblem(w, r, http.StatusBadRequest, "missing_user_id", "user_id is required")
		return nil, nil, r, false
	}
	if req.Question == "" {
		writeProblem(w, r, http.StatusBadRequest, "missing_question", "question is required")
		return nil, nil, r, false
	}
	rr := orchestrator.RunRequest{
		UserID: userID, SessionID: req.SessionID, Question: req.Question, ToolNames: req.ToolNames, PreloadSkills: req.PreloadSkills,
		ModelName: req.ModelName, ToolCallMode: req.ToolCallMode, Language: s.language(r, req.Language),
		MaxRounds: req.MaxRounds, Caller: orchestrator.CallerUser, Frontend: orchestrator.FrontendREST, ApprovalMode: req.ApprovalMode,
		SkipToolCalls: req.SkipToolCalls, Delivery: deliveryOf(req.Stream, submit),
		// A retry with the same key gets the first submit's run (and, on
		// POST /wunder, its whole stream or answer).
		IdempotencyKey: r.Header.Get("Idempotency-Key"),
	}
	if err := applyOverrides(&rr, req.ConfigOverrides, s.opts.RequestOverrides); err != nil {
		writeError(w, r, err)
		return nil, nil, r, false
	}
	if len(req.Attachments) > 0 {
		in := make([]orchestrator.Attachment, len(req.Attachments))
		for i, a := range req.Attachments {
			in[i] = orchestrator.Attachment{Type: a.Type, Name: a.Name, Content: a.Content, MimeType: a.MimeType}
		}
		var ok bool
		if rr.Attachments, ok = s.prepareAttachments(w, r, in); !ok {
			return nil, nil, r, false
		}
	}
	run, err := s.b.Start(r.Context(), rr)
	if err != nil {
		if errors.Is(err, orchestrator.ErrNotFound) {
			writeLocalizedProblem(w, r, localizedProblem(r, http.StatusNotFound, "session_not_found", errorMessage(r, "session_not_found", err, err.Error())))
			return nil, nil, r, false
		}
		writeError(w, r, err)
		return nil, nil, r, false
	}
	w.Header().Set("X-Run-Id", run.ID)
	w.Header().Set("X-Session-Id", run.SessionID)
	return run, &req, r, true
}

// handleWunder is POST /wunder: run a task and stream its events as SSE
// (default) or wait and answer with JSON (stream: false). Either way the
// run goes on if the client disconnects; follow it again with
// GET /wunder/runs/{run_id}/events.
func (s *Server) handleWunder(w http.ResponseWriter, r *http.Request) {
	run, req, r, ok := s.start(w, r, false)
	if !ok {
		return
	}
	if req.Stream == nil || *req.Stream {
		s.stream(sse.NewDeferredWriter(w), r, run.UserID, run.ID, 0)
		return
	}
	// The answer comes at the run's end, or at its pause: then it says
	// what the run asks (its pending approvals, stored before the pause
	// is), rather than hold the request for as long as the wait lasts.
	st, err := s.b.Wait(r.Context(), run.UserID, run.ID, 0, nil)
	if err != nil {
		// The client went away or the store failed; the run goes on.
		if r.Context().Err() == nil {
			writeError(w, r, err)
		}
		return
	}
	if st.Paused() {
		writeJSON(w, r, http.StatusOK, pausedResponse(run, st))
		return
	}
	var final orchestrator.FinalData
	if st.Event.Type == orchestrator.EventFinal {
		if err := jsonUnmarshal(st.Event.Data, &final); err != nil {
			writeError(w, r, err)
			return
		}
	}
	writeJSON(w, r, http.StatusOK, wunderResponse{
		SessionID: run.SessionID, RunID: run.ID, State: final.State, Answer: final.Answer,
		Usage: final.Usage, StopReason: final.StopReason, Error: final.Error, Artifacts: final.Artifacts, A2UI: final.A2UI,
	})
}

// handleSubmit is POST /wunder/runs: start a run and answer 202 at once
// with its ids; follow it with GET /wunder/runs/{run_id}/events.
func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request) {
	run, _, r, ok := s.start(w, r, true)
	if !ok {
		return
	}
	w.Header().Set("Location", "/wunder/runs/"+run.ID)
	writeJSON(w, r, http.StatusAccepted, run)
}

// deliveryOf is how a /wunder caller reads its run. POST /wunder/runs
// (submit) answers the run's ids at once, and its caller follows the run,
// whatever "stream" says; POST /wunder streams unless "stream" is false,
// sending the run's ids with its first event (handleWunder), or answers
// once at the end.
func deliveryOf(stream *bool, submit bool) orchestrator.Delivery {
	switch {
	case submit:
		return orchestrator.DeliverFollowed
	case stream != nil && !*stream:
		return orchestrator.DeliverBlocking
	}
	return orchestrator.DeliverStreamed
}
