package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// The pass-through meets the one policy point (orchestrator/policy.go) as
// every other path does. The session's user is the principal it was
// opened with. Lists are filtered on the SDK path (the raw path hands
// every list method to it), so a hidden tool, resource or prompt is
// absent; a call, read or get of one is refused with a JSON-RPC error on
// either path and never forwarded. Every tools/call is audited: allowed,
// denied or error, with its duration.

// check is the policy question of one item of the upstream.
func (p *proxy) check(what, name string) orchestrator.ToolCheck {
	c := orchestrator.ToolCheck{UserID: p.user, Server: p.name, Via: orchestrator.ViaPassthrough, What: what, Tool: name}
	if what == orchestrator.CheckTool {
		c.Tool = p.name + "@" + name
	}
	return c
}

// decide asks the policy about one item; a refusal is the JSON-RPC error
// to answer with, nil when the item may go upstream.
func (p *proxy) decide(ctx context.Context, what, name string) (orchestrator.Decision, error) {
	d := p.h.b.DecideTool(ctx, p.check(what, name))
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
func (p *proxy) audit(name string, args json.RawMessage, outcome, reason string, start time.Time) {
	p.h.b.RecordToolCall(&orchestrator.ToolLog{UserID: p.user, Tool: p.name + "@" + name, Arguments: clipJSON(args),
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

// callTool decides a tools/call on the SDK path, forwards it when
// allowed, and audits it.
func (p *proxy) callTool(ctx context.Context, up *mcp.ClientSession, raw *mcp.CallToolParamsRaw) (mcp.Result, error) {
	start := time.Now()
	if d, err := p.decide(ctx, orchestrator.CheckTool, raw.Name); err != nil {
		p.audit(raw.Name, raw.Arguments, orchestrator.OutcomeDenied, d.Reason, start)
		return nil, err
	}
	res, err := up.CallTool(ctx, &mcp.CallToolParams{Meta: raw.Meta, Name: raw.Name, Arguments: raw.Arguments})
	outcome := orchestrator.OutcomeAllowed
	if err != nil || (res != nil && res.IsError) {
		outcome = orchestrator.OutcomeError
	}
	p.audit(raw.Name, raw.Arguments, outcome, "", start)
	return res, err
}

// single decides a read or a get of one resource or prompt; nil when it
// may go upstream (and for every other method).
func (p *proxy) single(ctx context.Context, method string, params mcp.Params) error {
	var err error
	switch prm := params.(type) {
	case *mcp.ReadResourceParams:
		_, err = p.decide(ctx, orchestrator.CheckResource, prm.URI)
	case *mcp.SubscribeParams:
		_, err = p.decide(ctx, orchestrator.CheckResource, prm.URI)
	case *mcp.GetPromptParams:
		_, err = p.decide(ctx, orchestrator.CheckPrompt, prm.Name)
	}
	return err
}

// filter drops from a list answer what the policy hides from the session's
// user; other answers pass unchanged.
func (p *proxy) filter(ctx context.Context, res mcp.Result) mcp.Result {
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		c := *r
		c.Tools = keep(p, ctx, r.Tools, orchestrator.CheckTool, func(t *mcp.Tool) string { return t.Name })
		return &c
	case *mcp.ListResourcesResult:
		c := *r
		c.Resources = keep(p, ctx, r.Resources, orchestrator.CheckResource, func(x *mcp.Resource) string { return x.URI })
		return &c
	case *mcp.ListResourceTemplatesResult:
		c := *r
		c.ResourceTemplates = keep(p, ctx, r.ResourceTemplates, orchestrator.CheckResource, func(x *mcp.ResourceTemplate) string { return x.URITemplate })
		return &c
	case *mcp.ListPromptsResult:
		c := *r
		c.Prompts = keep(p, ctx, r.Prompts, orchestrator.CheckPrompt, func(x *mcp.Prompt) string { return x.Name })
		return &c
	}
	return res
}

// keep is the items the policy lets the session's user see, in order.
func keep[T any](p *proxy, ctx context.Context, items []T, what string, name func(T) string) []T {
	if len(items) == 0 {
		return items
	}
	checks := make([]orchestrator.ToolCheck, len(items))
	for i, it := range items {
		checks[i] = p.check(what, name(it))
	}
	out := make([]T, 0, len(items))
	for i, d := range p.h.b.DecideTools(ctx, checks) {
		if d.Verdict != orchestrator.VerdictDeny { // one that waits for approval is listed; its call is refused
			out = append(out, items[i])
		}
	}
	return out
}

// rawDecide is the policy on the raw path: a tools/call, resources/read or
// prompts/get of what the policy hides is answered with the refusal and
// never forwarded (allowed false). audit records a forwarded tools/call's
// outcome (a no-op for the other methods).
func (p *proxy) rawDecide(ctx context.Context, w http.ResponseWriter, method string, id, params json.RawMessage) (audit func(outcome string), allowed bool) {
	var prm struct {
		Name      string          `json:"name"`
		URI       string          `json:"uri"`
		Arguments json.RawMessage `json:"arguments"`
	}
	what := ""
	switch method {
	case "tools/call":
		what = orchestrator.CheckTool
	case "resources/read":
		what = orchestrator.CheckResource
	case "prompts/get":
		what = orchestrator.CheckPrompt
	default:
		return func(string) {}, true
	}
	_ = json.Unmarshal(params, &prm) // rawProgressTokenOK has seen an object
	name := prm.Name
	if what == orchestrator.CheckResource {
		name = prm.URI
	}
	start := time.Now()
	d, err := p.decide(ctx, what, name)
	if err != nil {
		if what == orchestrator.CheckTool {
			p.audit(name, prm.Arguments, orchestrator.OutcomeDenied, d.Reason, start)
		}
		rpcErr := err.(*jsonrpc.Error)
		writeRawErrorCode(w, id, rpcErr.Code, rpcErr.Message)
		return nil, false
	}
	if what != orchestrator.CheckTool {
		return func(string) {}, true
	}
	return func(outcome string) { p.audit(name, prm.Arguments, outcome, "", start) }, true
}

// answerOutcome is the audit's outcome of an upstream's answer to a
// tools/call: an error, or a result with isError, is an error.
func answerOutcome(ans envelope) string {
	if _, ok := ans["error"]; ok {
		return orchestrator.OutcomeError
	}
	var res struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(ans["result"], &res) != nil || res.IsError {
		return orchestrator.OutcomeError
	}
	return orchestrator.OutcomeAllowed
}
