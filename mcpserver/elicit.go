package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// Approvals through elicitation: a run started (or followed) by a client
// that declared the elicitation capability asks that client, with
// elicitation/create on the stream of the tool call, one request per
// pending approval:
//
//	message          what is asked: the tool, its arguments, the reason
//	requestedSchema  decision (enum of the approval's decisions), reason,
//	                 and for edit either arguments (a string holding a JSON
//	                 object) or, for param_required whose missing
//	                 properties are all primitives, those properties
//
// The answer maps to a decision: accept to the chosen one, decline to
// reject, cancel to cancel (the run ends cancelled). An answer that cannot
// be used (arguments that are not a JSON object, a decision not offered,
// arguments the tool's schema refuses) is asked again once, with the
// problem in the message; after a second one the call answers with what
// is pending, as for a client that cannot be asked but as an error result
// that says why. An approval decided elsewhere meanwhile withdraws the
// open request (elicitAll). The decision has no default: a client that
// accepts with defaults (wunder's own mcp.elicitation: defaults) declines,
// so it approves nothing.

// protocolNoServerRequests is the first MCP revision in which a server may
// not send requests of its own (SEP-2322: it returns input requests
// instead); the SDK compares the initialize request's version the same way.
const protocolNoServerRequests = "2026-07-28"

// canElicit reports whether the caller of a tool can be asked: a stateful
// session whose client declared form elicitation, on a revision before
// 2026-07-28.
func (h *Handler) canElicit(ss *mcp.ServerSession) bool {
	if h.opts.Stateless || ss == nil {
		return false
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil || p.ProtocolVersion >= protocolNoServerRequests {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil // neither declared means form (2025-06-18)
}

// elicitAll asks the caller to decide each pending approval in turn and
// records the decisions; it returns nil to follow on. Meanwhile a watcher
// follows the run from seq: when the run goes on (approval_decided) or
// ends without waiting for these answers (decided elsewhere: the REST
// API, another client, approvals.timeout_s; or cancelled), the open
// elicitation is withdrawn (its request cancelled) and the call follows
// on. The watcher ends before elicitAll returns.
func (f *follower) elicitAll(ctx context.Context, pending []*orchestrator.Approval, seq int64) *answer {
	wctx, withdraw := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range f.h.b.Events(wctx, f.user, f.runID, seq) {
			if err != nil {
				return // cancelled, or a store error: the elicitation stays
			}
			if ev.Type == orchestrator.EventApprovalDecided || ev.Type == orchestrator.EventUserInputAnswered || ev.Type == orchestrator.EventFinal {
				withdraw()
				return
			}
		}
	}()
	defer func() {
		withdraw()
		<-done
	}()
	for _, a := range pending {
		if wctx.Err() != nil {
			break
		}
		decision, ans := f.elicit(ctx, wctx, a)
		if ans != nil {
			return ans
		}
		if decision == orchestrator.DecisionCancel {
			break // the run ends: nothing more to ask
		}
	}
	if ctx.Err() != nil {
		return f.abandon(ctx)
	}
	return nil
}

// elicit asks the caller to decide one approval (in wctx, which the
// watcher cancels) and records the decision. It returns the decision
// taken, "" when none was, and nil to follow on.
func (f *follower) elicit(ctx, wctx context.Context, a *orchestrator.Approval) (string, *answer) {
	form := newApprovalForm(a, f.runID)
	problem := ""
	for range 2 {
		d, err := f.ask(wctx, form, problem)
		if err == nil {
			_, err = f.h.b.Decide(ctx, f.user, f.runID, a.ID, d)
			if err == nil {
				return d.Decision, nil
			}
			if errors.Is(err, orchestrator.ErrConflict) {
				return "", nil // decided elsewhere meanwhile
			}
			if !errors.Is(err, orchestrator.ErrInvalidArgument) {
				if ctx.Err() != nil {
					return "", f.abandon(ctx)
				}
				return "", f.failedAnswer(err)
			}
		}
		switch {
		case ctx.Err() != nil:
			return "", f.abandon(ctx)
		case wctx.Err() != nil:
			return "", nil // withdrawn: the run went on or ended without this answer
		}
		problem = err.Error()
	}
	pending, err := f.pending(ctx)
	if err != nil {
		return "", f.failedAnswer(err)
	}
	if !slices.ContainsFunc(pending, func(p *orchestrator.Approval) bool { return p.ID == a.ID }) {
		return "", nil
	}
	return "", f.waiting(orchestrator.RunWaitingApproval, pending, fmt.Sprintf("Asking for a decision on approval %s failed twice (last: %s); it is still pending.", a.ID, problem))
}

// ask sends one elicitation/create and maps its result to a decision.
func (f *follower) ask(ctx context.Context, form *approvalForm, problem string) (orchestrator.ApprovalDecision, error) {
	// The approval asked is recorded with the request, so that another
	// replica that receives the answer decides it (elicit_replicas.go).
	ask := &elicitAsk{run: f.runID, approval: form.a.ID}
	p := &mcp.ElicitParams{Mode: "form", Message: form.message(problem), RequestedSchema: form.schema}
	if f.task != "" {
		p.Meta = relatedTask(f.task) // asked for a task's tasks/result
	}
	res, err := f.req.Session.Elicit(context.WithValue(ctx, elicitKey{}, ask), p)
	if ask.wire != "" {
		f.h.forgetElicit(ctx, f.req.Session.ID(), ask.wire)
	}
	if err != nil {
		return orchestrator.ApprovalDecision{}, err
	}
	return form.decision(res)
}

// approvalForm is the elicitation of one approval.
type approvalForm struct {
	a     *orchestrator.Approval
	runID string
	// fields are the missing properties asked one by one (param_required
	// whose missing properties are all primitives); nil: edit arguments
	// are one JSON string.
	fields []string
	schema map[string]any
	// q is the question of a question (ask_user); nil for an approval.
	q *orchestrator.Question
}

// Reserved form fields.
const (
	fieldDecision  = "decision"
	fieldReason    = "reason"
	fieldArguments = "arguments"
	fieldAnswer    = "answer"
)

func newApprovalForm(a *orchestrator.Approval, runID string) *approvalForm {
	if q := orchestrator.QuestionOf(a); q != nil {
		return newQuestionForm(a, q, runID)
	}
	f := &approvalForm{a: a, runID: runID}
	props := map[string]any{
		fieldDecision: map[string]any{"type": "string", "title": "Decision", "enum": slices.Clone(a.Decisions),
			"description": decisionHelp(a.Decisions)},
		fieldReason: map[string]any{"type": "string", "title": "Reason",
			"description": "Why (optional). On reject the agent reads it as the tool's result."},
	}
	if a.Kind == orchestrator.KindParamRequired {
		f.fields = flatFields(a.Missing, props)
	}
	if f.fields == nil && slices.Contains(a.Decisions, orchestrator.DecisionEdit) {
		desc := "For edit: the call's arguments as a JSON object; they replace the model's."
		def := string(a.Arguments)
		if a.Kind == orchestrator.KindParamRequired {
			desc = "For edit: the missing arguments as a JSON object (they complete the model's), per this JSON Schema: " + string(a.Missing)
			def = "{}"
		}
		props[fieldArguments] = map[string]any{"type": "string", "title": "Arguments (JSON)", "description": desc, "default": def}
	}
	f.schema = map[string]any{"type": "object", "properties": props, "required": []string{fieldDecision}}
	return f
}

// newQuestionForm is the elicitation of a question: one field, the
// answer. A single choice is an enum, a multiple choice an array of the
// options (2025-11-25's multi-select); an open question, or one that also
// takes free text, is a string (its options named in the description).
func newQuestionForm(a *orchestrator.Approval, q *orchestrator.Question, runID string) *approvalForm {
	field := map[string]any{"type": "string", "title": "Answer"}
	switch {
	case len(q.Options) > 0 && !q.FreeText && q.Multi:
		field = map[string]any{"type": "array", "title": "Answer", "items": map[string]any{"type": "string", "enum": q.Options}}
	case len(q.Options) > 0 && !q.FreeText:
		field["enum"] = q.Options
	case len(q.Options) > 0:
		how := "Pick one of"
		if q.Multi {
			how = "Pick any of (comma separated)"
		}
		field["description"] = how + ": " + strings.Join(q.Options, ", ") + "; or answer in your own words."
	}
	return &approvalForm{a: a, runID: runID, q: q,
		schema: map[string]any{"type": "object", "properties": map[string]any{fieldAnswer: field}, "required": []string{fieldAnswer}}}
}

// flatFields adds the missing properties to props when each is a
// primitive elicitation allows under a name the form does not use, and
// returns their names (sorted); else nil and props unchanged.
func flatFields(missing json.RawMessage, props map[string]any) []string {
	var m struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if json.Unmarshal(missing, &m) != nil || len(m.Properties) == 0 {
		return nil
	}
	fields := map[string]any{}
	for name, s := range m.Properties {
		p, ok := primitive(s)
		if !ok || name == fieldDecision || name == fieldReason || name == fieldArguments {
			return nil
		}
		fields[name] = p
	}
	names := make([]string, 0, len(fields))
	for name, p := range fields {
		props[name] = p
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// primitive is a property schema reduced to what an elicitation schema may
// hold (string with enum/format/length, number/integer with bounds,
// boolean), or false when s is none of those. No default is copied: the
// person fills what the model left out.
func primitive(s map[string]any) (map[string]any, bool) {
	t, _ := s["type"].(string)
	enum, hasEnum := s["enum"].([]any)
	if t == "" && hasEnum {
		t = "string"
	}
	out := map[string]any{"type": t}
	keep := func(keys ...string) {
		for _, k := range keys {
			if v, ok := s[k]; ok {
				out[k] = v
			}
		}
	}
	keep("title", "description")
	switch t {
	case "string":
		if hasEnum {
			for _, v := range enum {
				if _, ok := v.(string); !ok {
					return nil, false
				}
			}
			out["enum"] = enum
		}
		if f, ok := s["format"].(string); ok && slices.Contains([]string{"email", "uri", "date", "date-time"}, f) {
			out["format"] = f
		}
		keep("minLength", "maxLength")
	case "number", "integer":
		if hasEnum {
			return nil, false
		}
		keep("minimum", "maximum")
	case "boolean":
		if hasEnum {
			return nil, false
		}
	default:
		return nil, false
	}
	return out, true
}

func decisionHelp(decisions []string) string {
	help := map[string]string{
		orchestrator.DecisionApprove: "approve runs the call as shown",
		orchestrator.DecisionEdit:    "edit runs it with the arguments you give",
		orchestrator.DecisionReject:  "reject skips it (the agent reads your reason and goes on)",
		orchestrator.DecisionCancel:  "cancel stops the whole run",
	}
	var parts []string
	for _, d := range decisions {
		parts = append(parts, help[d])
	}
	return strings.Join(parts, "; ") + "."
}

// message says what is asked.
func (f *approvalForm) message(problem string) string {
	a := f.a
	var b strings.Builder
	if problem != "" {
		fmt.Fprintf(&b, "Your previous answer could not be used: %s. Please answer again.\n\n", problem)
	}
	if f.q != nil {
		fmt.Fprintf(&b, "wunder's agent asks you:\n%s\n(run %s, question %s; decline to leave it unanswered, cancel to stop the run)", f.q.Question, f.runID, a.ID)
		return b.String()
	}
	if a.Kind == orchestrator.KindParamRequired {
		fmt.Fprintf(&b, "wunder's agent wants to run the tool %s, but it left out required arguments (%s).\nArguments given: %s\n",
			a.Tool, strings.Join(missingNames(a.Missing), ", "), orchestrator.ClipText(string(a.Arguments), 2000))
	} else {
		fmt.Fprintf(&b, "wunder's agent wants to run the tool %s with these arguments:\n%s\n", a.Tool, orchestrator.ClipText(string(a.Arguments), 2000))
	}
	fmt.Fprintf(&b, "Why you are asked: %s\n%s\n(run %s, approval %s)", a.Reason, decisionHelp(a.Decisions), f.runID, a.ID)
	return b.String()
}

func missingNames(missing json.RawMessage) []string {
	var m struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(missing, &m)
	return m.Required
}

// decision maps an elicitation result to a decision: accept to the chosen
// one, decline to reject, cancel to cancel.
func (f *approvalForm) decision(res *mcp.ElicitResult) (orchestrator.ApprovalDecision, error) {
	if f.q != nil {
		return f.answer(res)
	}
	switch res.Action {
	case "decline":
		return orchestrator.ApprovalDecision{Decision: orchestrator.DecisionReject, Reason: "declined by the person asked"}, nil
	case "cancel":
		return orchestrator.ApprovalDecision{Decision: orchestrator.DecisionCancel, Reason: "cancelled by the person asked"}, nil
	case "accept":
	default:
		return orchestrator.ApprovalDecision{}, fmt.Errorf("unknown action %q", res.Action)
	}
	decision, _ := res.Content[fieldDecision].(string)
	if !slices.Contains(f.a.Decisions, decision) {
		return orchestrator.ApprovalDecision{}, fmt.Errorf("decision must be one of %s, got %q", strings.Join(f.a.Decisions, ", "), decision)
	}
	d := orchestrator.ApprovalDecision{Decision: decision}
	d.Reason, _ = res.Content[fieldReason].(string)
	if decision == orchestrator.DecisionReject && strings.TrimSpace(d.Reason) == "" {
		d.Reason = "rejected by the person asked"
	}
	if decision != orchestrator.DecisionEdit {
		return d, nil
	}
	if f.fields != nil {
		args := map[string]any{}
		for _, name := range f.fields {
			if v, ok := res.Content[name]; ok {
				args[name] = v
			}
		}
		d.Arguments, _ = json.Marshal(args)
		return d, nil
	}
	s, _ := res.Content[fieldArguments].(string)
	var obj map[string]any
	if err := json.Unmarshal([]byte(s), &obj); err != nil || obj == nil {
		return orchestrator.ApprovalDecision{}, fmt.Errorf("arguments must be a JSON object, got %q", orchestrator.ClipText(s, 200))
	}
	d.Arguments = json.RawMessage(s)
	return d, nil
}

// answer maps an elicitation result to a question's decision: accept to
// its answer, decline to decline, cancel to cancel.
func (f *approvalForm) answer(res *mcp.ElicitResult) (orchestrator.ApprovalDecision, error) {
	switch res.Action {
	case "decline":
		return orchestrator.ApprovalDecision{Decision: orchestrator.DecisionDecline}, nil
	case "cancel":
		return orchestrator.ApprovalDecision{Decision: orchestrator.DecisionCancel, Reason: "cancelled by the person asked"}, nil
	case "accept":
	default:
		return orchestrator.ApprovalDecision{}, fmt.Errorf("unknown action %q", res.Action)
	}
	v, ok := res.Content[fieldAnswer]
	if !ok {
		return orchestrator.ApprovalDecision{}, fmt.Errorf("the answer is missing")
	}
	if s, isText := v.(string); isText && f.q.Multi && f.q.Open() {
		v = strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' })
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return orchestrator.ApprovalDecision{}, fmt.Errorf("the answer is not JSON: %v", err)
	}
	return orchestrator.ApprovalDecision{Decision: orchestrator.DecisionAnswer, Answer: raw}, nil
}
