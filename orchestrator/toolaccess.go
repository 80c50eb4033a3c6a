package orchestrator

import (
	"context"
	"slices"
)

// ToolAccess is a user's tool rule (the original wunder's
// /wunder/admin/user_accounts/{user_id}/tool_access). A tool it forbids is
// not in the user's catalog at all: not listed, not selectable by a run
// (ErrToolNotFound, as for an unknown tool), not callable. Names are
// canonical tool names or path.Match globs ("mcp_server@*").
type ToolAccess struct {
	// Allowed, when not nil, lists the only tools the user may use; nil
	// means every tool not denied.
	Allowed []string `json:"allowed_tools"`
	// Denied tools are never offered, whatever Allowed says.
	Denied []string `json:"denied_tools"`
	// Approval lists tools whose calls need a person's approval
	// (approval.go), read-only or not.
	Approval []string `json:"approval_tools"`
}

// Permits reports whether a (nil = no rule) lets the user use the tool.
func (a *ToolAccess) Permits(name string) bool {
	if a == nil {
		return true
	}
	if matchesAny(a.Denied, name) {
		return false
	}
	return a.Allowed == nil || matchesAny(a.Allowed, name)
}

// accessRule is the user's tool rule, nil when there is none.
func (r *Registry) accessRule(ctx context.Context, userID string) (*ToolAccess, error) {
	if r.access == nil {
		return nil, nil
	}
	return r.access.ToolAccess(ctx, userID)
}

// ToolAccessSource gives a user's tool rule; nil with no error means none.
// cmd/wunder backs it with the account store.
type ToolAccessSource interface {
	ToolAccess(ctx context.Context, userID string) (*ToolAccess, error)
}

// SetAccess makes the registry honour per-user tool rules from src. Call it
// before the registry is used (composition root only).
func (r *Registry) SetAccess(src ToolAccessSource) { r.access = src }

// permitted drops the tools the policy forbids the user (policy.go:
// admin-only tools, server allow-lists, the user's rule) from sel;
// always-on tools (final_response) stay.
func (r *Registry) permitted(ctx context.Context, userID string, sel *Selection) (*Selection, error) {
	if r.access == nil && len(r.policy.AdminOnly) == 0 && r.policy.AllowLists == nil {
		return sel, nil
	}
	who := r.subjectOf(ctx, userID)
	if who.ruleErr != nil {
		return sel, who.ruleErr
	}
	out := newSelection(r)
	out.who = who
	for _, name := range sel.order {
		t := sel.tools[name]
		spec := t.Spec()
		if spec.AlwaysOn || r.forbids(ctx, ToolCheck{UserID: userID, Tool: name, Spec: &spec, who: who}) == "" {
			out.add(t)
		}
	}
	return out, nil
}

// withOffered is req's tool names with those of req.OfferedTools the policy
// lets the user use; one it forbids them is left out (a log line says
// so). An offered name no toolset offers stays: Select waits for it (an
// MCP server still starting) or reports it unknown, as for any name.
func (o *Orchestrator) withOffered(ctx context.Context, req RunRequest) []string {
	if len(req.OfferedTools) == 0 {
		return req.ToolNames
	}
	all := o.tools.namedAll(ctx, req.UserID, req.OfferedTools)
	usable, err := o.tools.permitted(ctx, req.UserID, all)
	if err != nil {
		o.log.WarnContext(ctx, "offered tools left out: the user's tool access could not be read", "user_id", req.UserID, "err", err)
		return req.ToolNames
	}
	names := slices.Clone(req.ToolNames)
	for _, n := range req.OfferedTools {
		if _, known := all.Lookup(n); known {
			if _, ok := usable.Lookup(n); !ok {
				o.log.InfoContext(ctx, "offered tool left out: the policy does not let the user use it", "user_id", req.UserID, "tool", n)
				continue
			}
		}
		names = append(names, n)
	}
	return names
}
