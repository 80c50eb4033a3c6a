package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/wunder/wunder/orchestrator"
)

// The pass-through meets the one policy point (orchestrator/policy.go) as
// every other path does, for the user the session was opened with. A
// list's answer is filtered, so a hidden tool, resource, template or prompt
// is absent; a call, read, subscription or get of one is refused with a
// JSON-RPC error (-32001) and never forwarded. Every tools/call is audited:
// allowed, denied or error, with its duration.

// single are the requests about one item, decided before they go upstream:
// the kind of item and where its name is.
var single = map[string]string{
	"tools/call":          orchestrator.CheckTool,
	"resources/read":      orchestrator.CheckResource,
	"resources/subscribe": orchestrator.CheckResource,
	"prompts/get":         orchestrator.CheckPrompt,
}

// lists are the list requests whose answers are filtered: the kind of item
// and the result's field that holds them.
var lists = map[string]struct{ what, field string }{
	"tools/list":               {orchestrator.CheckTool, "tools"},
	"resources/list":           {orchestrator.CheckResource, "resources"},
	"resources/templates/list": {orchestrator.CheckResource, "resourceTemplates"},
	"prompts/list":             {orchestrator.CheckPrompt, "prompts"},
}

// admit checks a request before it goes upstream: a refusal is the error to
// answer with. final is what the response passes through on its way back
// (nil when none came): a list filtered, a tools/call audited.
func (s *passSession) admit(ctx context.Context, m *message) (final func([]byte) []byte, err *jsonrpc.Error) {
	pass := func(resp []byte) []byte { return resp }
	what, one := single[m.Method]
	if !one && !bytes.Contains(m.Params, []byte(`"progressToken"`)) {
		if l, ok := lists[m.Method]; ok {
			return func(resp []byte) []byte { return s.filter(ctx, l.what, l.field, resp) }, nil
		}
		return pass, nil
	}
	var prm struct {
		Name      string          `json:"name"`
		URI       string          `json:"uri"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if len(m.Params) > 0 {
		if e := json.Unmarshal(m.Params, &prm); e != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + e.Error()}
		}
	}
	// A progress token keys the upstream's progress to its request: a
	// string or a number, as the spec says.
	if t := prm.Meta.ProgressToken; t != nil && !idLike(t) && string(t) != "null" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "progress token must be a string or a number"}
	}
	if !one {
		if l, ok := lists[m.Method]; ok {
			return func(resp []byte) []byte { return s.filter(ctx, l.what, l.field, resp) }, nil
		}
		return pass, nil
	}
	name := prm.Name
	if what == orchestrator.CheckResource {
		name = prm.URI
	}
	start := time.Now()
	d, err := s.decide(ctx, what, name)
	if what != orchestrator.CheckTool {
		return pass, err
	}
	if err != nil {
		s.audit(name, prm.Arguments, orchestrator.OutcomeDenied, d.Reason, start)
		return nil, err
	}
	return func(resp []byte) []byte {
		s.audit(name, prm.Arguments, callOutcome(resp), "", start)
		return resp
	}, nil
}

// check is the policy question of one item of the upstream.
func (s *passSession) check(what, name string) orchestrator.ToolCheck {
	c := orchestrator.ToolCheck{UserID: s.user, Server: s.route.name, Via: orchestrator.ViaPassthrough, What: what, Tool: name}
	if what == orchestrator.CheckTool {
		c.Tool = s.route.name + "@" + name
	}
	return c
}

// decide asks the policy about one item; a refusal is the JSON-RPC error
// to answer with, nil when the item may go upstream.
func (s *passSession) decide(ctx context.Context, what, name string) (orchestrator.Decision, *jsonrpc.Error) {
	d := s.route.h.b.DecideTool(ctx, s.check(what, name))
	if d.Allowed() {
		return d, nil
	}
	reason := d.Reason
	if d.Verdict == orchestrator.VerdictNeedsApproval {
		reason = "it waits for a person's approval (" + d.Reason + "), and the pass-through cannot wait: call it in a run (wunder@run), where approvals are asked"
	}
	return d, &jsonrpc.Error{Code: codeUnauthorized, Message: "permission denied: " + reason}
}

// audit records one tools/call decision and how it went.
func (s *passSession) audit(name string, args json.RawMessage, outcome, reason string, start time.Time) {
	s.route.h.b.RecordToolCall(&orchestrator.ToolLog{UserID: s.user, Tool: s.route.name + "@" + name, Arguments: clipJSON(args),
		FrontEnd: orchestrator.FrontendMCP, Via: orchestrator.ViaPassthrough, Outcome: outcome, Reason: reason,
		DurationMS: time.Since(start).Milliseconds()})
}

// maxAuditArgs bounds the arguments an audit record keeps; longer ones
// are left out (the record says the call, not its payload).
const maxAuditArgs = 4000

func clipJSON(args json.RawMessage) json.RawMessage {
	if len(args) > maxAuditArgs {
		return nil
	}
	return args
}

// callOutcome is the audit's outcome of the response to a tools/call:
// none, an error, or a result with isError is an error.
func callOutcome(resp []byte) string {
	var ans struct {
		Error  json.RawMessage `json:"error"`
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if json.Unmarshal(resp, &ans) != nil || ans.Error != nil || ans.Result == nil || ans.Result.IsError {
		return orchestrator.OutcomeError
	}
	return orchestrator.OutcomeAllowed
}

// filter drops from a list's response the items the policy hides from the
// session's user (one that waits for approval is listed; its call is
// refused). A response with nothing hidden goes out as it came.
func (s *passSession) filter(ctx context.Context, what, field string, resp []byte) []byte {
	var ans struct {
		ID     json.RawMessage            `json:"id"`
		Result map[string]json.RawMessage `json:"result"`
	}
	var items []json.RawMessage
	if resp == nil || json.Unmarshal(resp, &ans) != nil || ans.Result == nil ||
		json.Unmarshal(ans.Result[field], &items) != nil || len(items) == 0 {
		return resp
	}
	checks := make([]orchestrator.ToolCheck, len(items))
	for i, it := range items {
		var n struct {
			Name        string `json:"name"`
			URI         string `json:"uri"`
			URITemplate string `json:"uriTemplate"`
		}
		_ = json.Unmarshal(it, &n)
		switch field {
		case "resources":
			n.Name = n.URI
		case "resourceTemplates":
			n.Name = n.URITemplate
		}
		checks[i] = s.check(what, n.Name)
	}
	kept := make([]json.RawMessage, 0, len(items))
	for i, d := range s.route.h.b.DecideTools(ctx, checks) {
		if d.Verdict != orchestrator.VerdictDeny {
			kept = append(kept, items[i])
		}
	}
	if len(kept) == len(items) {
		return resp
	}
	var err error
	if ans.Result[field], err = json.Marshal(kept); err != nil {
		return resp
	}
	result, err := json.Marshal(ans.Result)
	if err != nil {
		return resp
	}
	b := append([]byte(`{"jsonrpc":"2.0","id":`), ans.ID...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}
