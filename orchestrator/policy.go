package orchestrator

import (
	"context"
	"fmt"
	"strings"
)

// The one policy point (DESIGN.md 3a). Every tool call, whatever its path
// — a run's round (built-ins, MCP, skills, knowledge, user and shared
// tools, a2a@service), a direct call of the /wunder/mcp catalog, a call
// through an MCP pass-through route — asks [Orchestrator.DecideTool]; every
// list of tools a principal sees (the registry's selections and catalog,
// a pass-through's tools/list) is filtered by the same rules
// ([Registry.forbids]). The rules, in order:
//
//  1. tools.admin_only: only admins may use the tools it names;
//  2. the server allow-list: an MCP tool its server's allow_tools does not
//     list (mcp.servers[].allow_tools);
//  3. the user's tool access (denied_tools, allowed_tools);
//  4. the approval policy (approvals.tools, approvals.all_tools, the
//     user's approval_tools, the approval mode): the call waits for a
//     person.
//
// Every decision on a call is recorded in the audit log (the tool log,
// toollog.go): allowed, denied or error, with user, tool, front-end, path,
// run and session when there is one, time and duration. No front-end or
// adapter keeps a second copy of these rules.

// Verdict is what the policy says of one call.
type Verdict string

// Verdicts.
const (
	VerdictAllow         Verdict = "allow"
	VerdictDeny          Verdict = "deny"
	VerdictNeedsApproval Verdict = "needs_approval"
)

// Paths a tool call takes to its tool ([ToolCheck.Via], [ToolLog.Via]).
const (
	// ViaRun is a call a run's model made.
	ViaRun = "run"
	// ViaCatalog is a direct call of a tool of the caller's catalog
	// ([Orchestrator.CallTool], the /wunder/mcp catalog).
	ViaCatalog = "catalog"
	// ViaPassthrough is a call forwarded to an upstream MCP server
	// unchanged (/wunder/mcp/{server}).
	ViaPassthrough = "passthrough"
	// ViaProbe is an admin's test call of a configured MCP server's tool
	// (the console's "test this tool", POST /wunder/admin/mcp/tools/call): an
	// admin action outside any user's policy, audited all the same.
	ViaProbe = "probe"
)

// Outcomes of a recorded call ([ToolLog.Outcome]).
const (
	// OutcomeAllowed: the call was allowed and its tool answered.
	OutcomeAllowed = "allowed"
	// OutcomeDenied: the policy (or a person) refused the call; the tool
	// never saw it.
	OutcomeDenied = "denied"
	// OutcomeError: the call was allowed and failed (an error result, an
	// unknown tool, a protocol error of the upstream).
	OutcomeError = "error"
)

// ToolCheck is one question to the policy: may UserID use Tool, by Via?
type ToolCheck struct {
	UserID string
	// Tool is the canonical name: "read_file", "fs@read_text", "a2a@peer".
	Tool string
	// Spec is the tool's spec when the caller has it (a run, the catalog);
	// nil for a pass-through call, whose tool wunder knows only by name:
	// approval modes then treat it as one that changes things.
	Spec *ToolSpec
	// Server is the MCP server a pass-through call goes to ("" otherwise:
	// an MCP tool's server is read from its canonical name).
	Server string
	// Via is the call's path (ViaRun, ViaCatalog, ViaPassthrough).
	Via string
	// ApprovalMode is the run's approval mode; "" = the policy's.
	ApprovalMode string
	// What the check is about: CheckTool (default), CheckResource or
	// CheckPrompt. Resources and prompts are not tools: the server's
	// allow-list alone decides them (they are never admin-only, named by
	// a user's tool access, or waiting for approval).
	What string

	// who is the user's rule and role, when the caller already has them
	// (a run's selection); nil = read them now.
	who *subject
}

// Decision is the policy's answer.
type Decision struct {
	Verdict Verdict
	// Reason says why in words a person (or a model) can act on, naming
	// the rule and its configuration key; "" for a plain allow.
	Reason string
}

// Allowed reports whether the call may run now.
func (d Decision) Allowed() bool { return d.Verdict == VerdictAllow }

// AllowLists answers for the configured MCP servers' allow-lists
// (mcp.servers[].allow_tools, allow_resources, allow_prompts);
// adapters/mcptools.Set implements it. Each method's known is false when
// server is not a configured MCP server (no list applies).
type AllowLists interface {
	AllowsTool(server, tool string) (allowed, known bool)
	// AllowsResource decides a resource URI, or a resource template's
	// URI template.
	AllowsResource(server, uri string) (allowed, known bool)
	AllowsPrompt(server, prompt string) (allowed, known bool)
}

// What a check is about ([ToolCheck.What]).
const (
	// CheckTool (the zero value): a tool, decided by every rule.
	CheckTool = ""
	// CheckResource: an MCP resource (Tool holds its URI), decided by its
	// server's allow_resources alone.
	CheckResource = "resource"
	// CheckPrompt: an MCP prompt (Tool holds its name), decided by its
	// server's allow_prompts alone.
	CheckPrompt = "prompt"
)

// AdminSource says whether a user has the admin role (cmd/wunder backs it
// with the account store).
type AdminSource interface {
	IsAdminUser(ctx context.Context, userID string) (bool, error)
}

// PolicyOptions configure the policy's rules besides the approvals
// (Options.Approvals) and the users' tool access ([Registry.SetAccess]).
// Zero values mean no such rule.
type PolicyOptions struct {
	// AdminOnly names the tools (canonical names or path.Match globs) only
	// admins may use (tools.admin_only).
	AdminOnly []string
	// Admins says who is an admin; nil = nobody (every admin-only tool is
	// hidden), unless EveryoneAdmin.
	Admins AdminSource
	// EveryoneAdmin: the server has no API key, so every caller is the
	// local operator (loopback only), who may use admin-only tools.
	EveryoneAdmin bool
	// AllowLists are the MCP servers' allow-lists; nil = none.
	AllowLists AllowLists
}

// SetPolicy sets the policy's rules (composition root only, before the
// registry is used).
func (r *Registry) SetPolicy(o PolicyOptions) { r.policy = o }

// DecideTool is THE decision on one tool call (see the top of policy.go).
// It never fails: a rule that cannot be read denies (fail closed), saying
// so.
func (o *Orchestrator) DecideTool(ctx context.Context, c ToolCheck) Decision {
	if c.What != CheckTool {
		if reason := o.tools.unlisted(c); reason != "" {
			return Decision{Verdict: VerdictDeny, Reason: reason}
		}
		return Decision{Verdict: VerdictAllow}
	}
	if c.who == nil {
		c.who = o.tools.subjectOf(ctx, c.UserID)
	}
	if reason := o.tools.forbids(ctx, c); reason != "" {
		return Decision{Verdict: VerdictDeny, Reason: reason}
	}
	if reason := o.approvalReason(c); reason != "" {
		return Decision{Verdict: VerdictNeedsApproval, Reason: reason}
	}
	return Decision{Verdict: VerdictAllow}
}

// DecideTools decides several checks, reading each user's rule once: a
// list a front-end filters (an MCP pass-through's tools/list).
func (o *Orchestrator) DecideTools(ctx context.Context, checks []ToolCheck) []Decision {
	out := make([]Decision, len(checks))
	who := map[string]*subject{}
	for i, c := range checks {
		if c.What == CheckTool && c.who == nil {
			if who[c.UserID] == nil {
				who[c.UserID] = o.tools.subjectOf(ctx, c.UserID)
			}
			c.who = who[c.UserID]
		}
		out[i] = o.DecideTool(ctx, c)
	}
	return out
}

// unlisted is the rule of resources and prompts: why the server's
// allow-list leaves c out ("" when it does not).
func (r *Registry) unlisted(c ToolCheck) string {
	if r.policy.AllowLists == nil || c.Server == "" {
		return ""
	}
	switch c.What {
	case CheckResource:
		if ok, known := r.policy.AllowLists.AllowsResource(c.Server, c.Tool); known && !ok {
			return fmt.Sprintf("MCP server %s does not offer resource %s (mcp.servers[%s].allow_resources)", c.Server, c.Tool, c.Server)
		}
	case CheckPrompt:
		if ok, known := r.policy.AllowLists.AllowsPrompt(c.Server, c.Tool); known && !ok {
			return fmt.Sprintf("MCP server %s does not offer prompt %s (mcp.servers[%s].allow_prompts)", c.Server, c.Tool, c.Server)
		}
	}
	return ""
}

// subject is what the policy knows of a user: their tool rule (read once)
// and whether they are an admin (asked once, when an admin-only tool
// comes up).
type subject struct {
	userID  string
	rule    *ToolAccess
	ruleErr error
	admin   *bool
	// adminErr is why admin could not be read.
	adminErr error
}

// subjectOf reads the user's tool rule.
func (r *Registry) subjectOf(ctx context.Context, userID string) *subject {
	rule, err := r.accessRule(ctx, userID)
	return &subject{userID: userID, rule: rule, ruleErr: err}
}

// isAdmin asks the policy's AdminSource once per subject.
func (r *Registry) isAdmin(ctx context.Context, s *subject) (bool, error) {
	if r.policy.EveryoneAdmin {
		return true, nil
	}
	if s.admin == nil {
		admin := false
		if r.policy.Admins != nil {
			admin, s.adminErr = r.policy.Admins.IsAdminUser(ctx, s.userID)
		}
		s.admin = &admin
	}
	return *s.admin, s.adminErr
}

// forbids is rules 1-3: why the user may not use the tool at all ("" if
// they may). The lists of tools a user sees are filtered with it; c.who
// must be set.
func (r *Registry) forbids(ctx context.Context, c ToolCheck) string {
	p := r.policy
	if len(p.AdminOnly) > 0 && matchesAny(p.AdminOnly, c.Tool) {
		admin, err := r.isAdmin(ctx, c.who)
		switch {
		case err != nil:
			return fmt.Sprintf("%s is for admins only (tools.admin_only) and the user's roles could not be read: %v", c.Tool, err)
		case !admin:
			return fmt.Sprintf("%s is for admins only (tools.admin_only)", c.Tool)
		}
	}
	if p.AllowLists != nil {
		server, tool := c.Server, ""
		switch {
		case server != "":
			tool = strings.TrimPrefix(c.Tool, server+"@")
		case c.Spec != nil && c.Spec.Source == SourceMCP:
			server, tool, _ = strings.Cut(c.Tool, "@")
		}
		if server != "" {
			if ok, known := p.AllowLists.AllowsTool(server, tool); known && !ok {
				return fmt.Sprintf("MCP server %s does not offer %s (mcp.servers[%s].allow_tools)", server, tool, server)
			}
		}
	}
	switch {
	case c.who.ruleErr != nil:
		return fmt.Sprintf("the user's tool access could not be read, so %s is refused: %v", c.Tool, c.who.ruleErr)
	case !c.who.rule.Permits(c.Tool):
		return fmt.Sprintf("the user's tool access does not allow %s (denied_tools or allowed_tools of /wunder/admin/user_accounts/{user_id}/tool_access)", c.Tool)
	}
	return ""
}

// approvalReason is rule 4: why the call waits for a person ("" if it
// does not). c.who must be set.
func (o *Orchestrator) approvalReason(c ToolCheck) string {
	p := o.opts.Approvals
	mode := firstNonEmpty(c.ApprovalMode, p.Mode)
	var spec ToolSpec
	if c.Spec != nil {
		spec = *c.Spec
	}
	if spec.AlwaysOn || spec.RunOnly {
		return "" // final_response, plan: the run's own state
	}
	switch {
	case matchesAny(p.Tools, c.Tool):
		return "approvals.tools names " + c.Tool
	case matchesAny(o.userApprovals(c.who), c.Tool):
		return "your account's tool access asks approval for " + c.Tool
	case spec.ReadOnly:
	case p.AllTools:
		return "approvals.all_tools: " + c.Tool + " changes things"
	case mode == ApprovalSuggest:
		return "approval mode suggest: " + c.Tool + " changes things"
	case mode == ApprovalAutoEdit && !spec.EditsFiles:
		return "approval mode auto_edit: " + c.Tool + " is not a file edit"
	}
	return ""
}

// userApprovals is the user's ToolAccess.Approval. A rule that cannot be
// read asks for everything (fail closed).
func (o *Orchestrator) userApprovals(s *subject) []string {
	switch {
	case s.ruleErr != nil:
		o.log.Warn("tool access not read; every tool asks approval", "user_id", s.userID, "err", s.ruleErr)
		return []string{"*"}
	case s.rule != nil:
		return s.rule.Approval
	}
	return nil
}
