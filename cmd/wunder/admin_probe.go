package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/gateway"
	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// The admin routes that try what the configuration names (gateway's
// ConfigProbe): an MCP server's tool list and one tool call, a peer's
// agent card.

var _ gateway.ConfigProbe = (*configAdmin)(nil)

// ListMCPTools lists a configured server's tools now (and caches them), or
// those of a server entry that is not configured: validated like
// mcp.servers, connected for this request only.
func (ca *configAdmin) ListMCPTools(ctx context.Context, name string, server map[string]any) (any, error) {
	if server == nil {
		if ca.a.mcp == nil {
			return nil, fmt.Errorf("%w: MCP is not enabled on this server", orchestrator.ErrUnavailable)
		}
		specs, err := ca.a.mcp.set.Refresh(ctx, name)
		if err != nil {
			return nil, err
		}
		return map[string]any{"server": name, "tools": nonNilSlice(specs)}, nil
	}
	cur := ca.cur.Load()
	next, err := cur.WithSection("mcp.servers", []any{server})
	if err != nil {
		return nil, configError(err)
	}
	entry := next.MCP.Servers[0]
	set, err := mcptools.New([]mcptools.ServerConfig{mcpServerConfig(entry, next.MCP)}, &mcptools.Options{
		Timeout: next.MCP.Timeout(), ClientVersion: version, Logger: ca.a.log.With("component", "mcp", "probe", entry.Name),
	})
	if err != nil {
		return nil, &gateway.ConfigError{Fields: []gateway.ConfigFieldError{{Key: "server", Message: err.Error()}}}
	}
	defer set.Close()
	specs, err := set.Refresh(ctx, entry.Name)
	if err != nil {
		return nil, err
	}
	return map[string]any{"server": entry.Name, "tools": nonNilSlice(specs)}, nil
}

// CallMCPTool calls one tool of a configured server with arguments, as a
// run would (the server's timeout applies), and reports the result.
func (ca *configAdmin) CallMCPTool(ctx context.Context, server, tool string, arguments json.RawMessage) (any, error) {
	if ca.a.mcp == nil {
		return nil, fmt.Errorf("%w: MCP is not enabled on this server", orchestrator.ErrUnavailable)
	}
	tools, err := ca.a.mcp.set.Tools(ctx, "")
	if err != nil {
		return nil, err
	}
	want := server + "@" + tool
	for _, t := range tools {
		if t.Spec().Name != want {
			continue
		}
		start := time.Now()
		res, err := t.Call(ctx, &orchestrator.ToolInvocation{
			UserID: "admin", CallID: "admin-probe", Arguments: arguments,
			Output: func(string, string) {}, Emit: func(string, any) {},
		})
		// An admin's probe is outside any user's policy, but no tool call
		// escapes the audit (orchestrator/policy.go).
		audit := &orchestrator.ToolLog{UserID: "admin", CallID: "admin-probe", Tool: want, Arguments: arguments,
			DurationMS: time.Since(start).Milliseconds(), Via: orchestrator.ViaProbe, Outcome: orchestrator.OutcomeAllowed}
		if err != nil || res.IsError {
			audit.Outcome = orchestrator.OutcomeError
		}
		ca.a.orch.RecordToolCall(audit)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", orchestrator.ErrUnavailable, want, err)
		}
		return map[string]any{"server": server, "tool": tool, "result": res.Content, "content": res.Content, "is_error": res.IsError,
			"data": res.Data, "duration_ms": time.Since(start).Milliseconds()}, nil
	}
	return nil, fmt.Errorf("%w: MCP server %q offers no tool %q (is it configured, and listed? POST /wunder/admin/mcp/tools lists them)",
		orchestrator.ErrNotFound, server, tool)
}

// FetchA2ACard reads a peer's agent card: a configured service's (with its
// headers and token) or the one at endpoint. It answers the card as the
// peer sent it and what wunder understands of it.
func (ca *configAdmin) FetchA2ACard(ctx context.Context, name, endpoint string, headers map[string]string) (any, error) {
	hdr := http.Header{}
	if name != "" {
		found := false
		for _, s := range ca.cur.Load().A2A.Services {
			if s.Name != name {
				continue
			}
			found, endpoint = true, s.Endpoint
			for k, v := range s.Headers {
				hdr.Set(k, v)
			}
			if s.BearerToken != "" {
				hdr.Set("Authorization", "Bearer "+s.BearerToken)
			}
		}
		if !found {
			return nil, fmt.Errorf("%w: no A2A service %q is configured", orchestrator.ErrNotFound, name)
		}
	}
	for k, v := range headers {
		hdr.Set(k, v)
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &gateway.ConfigError{Fields: []gateway.ConfigFieldError{{Key: "endpoint", Message: "must be an http(s) URL, got " + strconv.Quote(endpoint)}}}
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	raw, where, err := w.FetchCardRaw(ctx, http.DefaultClient, u.String(), hdr, true)
	if err != nil {
		return nil, fmt.Errorf("%w: agent card of %s: %v", orchestrator.ErrUnavailable, endpoint, err)
	}
	card, err := w.ParseCard(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", orchestrator.ErrUnavailable, where, err)
	}
	ifaces := make([]map[string]string, 0, len(card.Interfaces))
	for _, i := range card.Interfaces {
		ifaces = append(ifaces, map[string]string{"url": i.URL, "transport": i.Transport, "protocol_version": string(i.Version)})
	}
	return map[string]any{"url": where, "card": json.RawMessage(raw), "summary": map[string]any{
		"name": card.Name, "description": card.Description, "streaming": card.Streaming, "push": card.Push,
		"interfaces": ifaces, "skills": nonNilSlice(card.Skills),
	}}, nil
}
