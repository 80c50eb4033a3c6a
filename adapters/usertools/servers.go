package usertools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// The MCP servers of /wunder/user_tools/mcp: each an mcp.servers entry
// (name, transport, url, headers, ...) plus shared_tools, stored as
// toolconfig.MCPServer (Config: the entry without shared_tools).

// Masked stands for a secret value in what [Set.Servers] returns. Sent
// back unchanged to [Set.SetServers], it keeps the stored value.
const Masked = "******"

// checkServerName is the rule of a user's server name: a tool name
// (toolconfig.CheckName) in ASCII, as mcp.servers names are.
func checkServerName(name string) error {
	if err := toolconfig.CheckName("mcp server", name); err != nil {
		return err
	}
	if strings.ContainsFunc(name, func(r rune) bool { return r > 0x7f || r == '.' }) {
		return fmt.Errorf("%w: mcp server name %q may hold only A-Z a-z 0-9 _ -", orchestrator.ErrInvalidArgument, name)
	}
	return nil
}

// Servers returns the user's MCP servers as stored, secrets masked.
func (s *Set) Servers(ctx context.Context, userID string) ([]json.RawMessage, error) {
	c, err := s.configs.Get(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, 0, len(c.MCPServers))
	for _, sv := range c.MCPServers {
		out = append(out, view(sv))
	}
	return out, nil
}

// view renders a stored server with its secrets masked.
func view(sv toolconfig.MCPServer) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(sv.Config, &m); err != nil || m == nil {
		m = map[string]any{}
	}
	m["name"] = sv.Name
	if v, ok := m["bearer_token"].(string); ok && v != "" {
		m["bearer_token"] = Masked
	}
	for _, k := range []string{"headers", "env"} {
		if hm, ok := m[k].(map[string]any); ok {
			for h := range hm {
				hm[h] = Masked
			}
		}
	}
	m["shared_tools"] = nonNil(sv.SharedTools)
	b, _ := json.Marshal(m)
	return b
}

// SetServers replaces the user's MCP servers after checking every one of
// them (see the package doc); nothing is written when one is refused. It
// returns the servers as [Set.Servers] does.
func (s *Set) SetServers(ctx context.Context, userID string, raw []json.RawMessage) ([]json.RawMessage, error) {
	if len(raw) > s.opts.MaxServers {
		return nil, fmt.Errorf("%w: %d servers; a user may have at most %d (user_tools.max_servers)", orchestrator.ErrInvalidArgument, len(raw), s.opts.MaxServers)
	}
	cur, err := s.configs.Get(ctx, userID)
	if err != nil {
		return nil, err
	}
	servers := make([]toolconfig.MCPServer, 0, len(raw))
	for i, r := range raw {
		sv, err := s.checkEntry(ctx, userID, r, cur, servers)
		if err != nil {
			return nil, invalid(fmt.Sprintf("servers[%d]", i), err)
		}
		servers = append(servers, sv)
	}
	c, err := s.configs.Update(ctx, userID, func(c *toolconfig.UserConfig) error {
		c.MCPServers = servers
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.forget(userID, c.MCPServers)
	out := make([]json.RawMessage, 0, len(c.MCPServers))
	for _, sv := range c.MCPServers {
		out = append(out, view(sv))
	}
	return out, nil
}

// checkEntry checks one server of a write: its name, its configuration
// (by the Connector), and its shared tools against what the server
// offers the owner.
func (s *Set) checkEntry(ctx context.Context, owner string, raw json.RawMessage, cur *toolconfig.UserConfig, before []toolconfig.MCPServer) (toolconfig.MCPServer, error) {
	sv, err := splitEntry(raw)
	if err != nil {
		return sv, err
	}
	if slices.ContainsFunc(before, func(o toolconfig.MCPServer) bool { return o.Name == sv.Name }) {
		return sv, fmt.Errorf("the name %q is used by another server", sv.Name)
	}
	if sv.Config, err = unmask(sv.Name, sv.Config, cur); err != nil {
		return sv, err
	}
	info, err := s.conn.Check(ctx, sv.Config)
	if err != nil {
		return sv, fmt.Errorf("%s: %w", sv.Name, err)
	}
	seen := map[string]bool{}
	for _, t := range sv.SharedTools {
		switch {
		case t == "" || strings.Contains(t, "@"):
			return sv, fmt.Errorf("%s: shared_tools: %q is not a tool name of the server", sv.Name, t)
		case seen[t]:
			return sv, fmt.Errorf("%s: shared_tools: %q is listed twice", sv.Name, t)
		case len(info.AllowTools) > 0 && !slices.Contains(info.AllowTools, t):
			return sv, fmt.Errorf("%s: shared_tools: %q is not in allow_tools (%s)", sv.Name, t, strings.Join(info.AllowTools, ", "))
		}
		seen[t] = true
	}
	if len(sv.SharedTools) == 0 || !info.Enabled {
		return sv, nil
	}
	return sv, s.checkShared(ctx, owner, sv)
}

// checkShared lists the server's tools (through the pool, bounded by the
// discovery timeout) and checks that each shared tool is one of them and
// permitted to its owner.
func (s *Set) checkShared(ctx context.Context, owner string, sv toolconfig.MCPServer) error {
	e := s.get(owner, sv)
	if e == nil {
		return fmt.Errorf("%w: shutting down", orchestrator.ErrUnavailable)
	}
	t := time.NewTimer(s.opts.DiscoveryTimeout)
	defer t.Stop()
	select {
	case <-e.done:
	case <-t.C:
		return fmt.Errorf("%s: shared_tools cannot be checked: the server did not list its tools within %s", sv.Name, s.opts.DiscoveryTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
	e.mu.Lock()
	openErr := e.err
	e.mu.Unlock()
	have := map[string]bool{}
	for _, tl := range e.tools(ctx, owner) {
		have[tl.(*userTool).bare] = true
	}
	if len(have) == 0 && openErr != nil {
		return fmt.Errorf("%s: shared_tools cannot be checked: listing the server's tools failed: %v", sv.Name, openErr)
	}
	var rule *orchestrator.ToolAccess
	if s.opts.Access != nil {
		r, err := s.opts.Access.ToolAccess(ctx, owner)
		if err != nil {
			return err
		}
		rule = r
	}
	for _, tool := range sv.SharedTools {
		if !have[tool] {
			return fmt.Errorf("%s: shared_tools: the server has no tool %q (it has %s)", sv.Name, tool, strings.Join(slices.Sorted(maps.Keys(have)), ", "))
		}
		if name := owner + "@" + sv.Name + "@" + tool; !rule.Permits(name) {
			return fmt.Errorf("%s: shared_tools: %q: your tool access does not permit %s", sv.Name, tool, name)
		}
	}
	return nil
}

// splitEntry takes name and shared_tools out of a server entry; the rest
// (with the name, and "endpoint", the original wunder's spelling, read as
// url) is the server's configuration.
func splitEntry(raw json.RawMessage) (toolconfig.MCPServer, error) {
	var sv toolconfig.MCPServer
	var m map[string]json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &m) != nil {
		return sv, fmt.Errorf("a server must be a JSON object")
	}
	if err := json.Unmarshal(m["name"], &sv.Name); err != nil || m["name"] == nil {
		return sv, fmt.Errorf("name is required, a string")
	}
	if err := checkServerName(sv.Name); err != nil {
		return sv, err
	}
	if st, ok := m["shared_tools"]; ok {
		if err := json.Unmarshal(st, &sv.SharedTools); err != nil {
			return sv, fmt.Errorf("%s: shared_tools must be a list of tool names", sv.Name)
		}
		delete(m, "shared_tools")
	}
	if ep, ok := m["endpoint"]; ok {
		if _, both := m["url"]; both {
			return sv, fmt.Errorf("%s: give url or endpoint, not both", sv.Name)
		}
		m["url"] = ep
		delete(m, "endpoint")
	}
	cfg, err := json.Marshal(m) // keys sorted: one configuration, one hash
	if err != nil {
		return sv, err
	}
	sv.Config = cfg
	return sv, nil
}

// unmask puts the stored values of the same server back where a write
// sent [Masked].
func unmask(name string, config json.RawMessage, cur *toolconfig.UserConfig) (json.RawMessage, error) {
	if !bytes.Contains(config, []byte(Masked)) {
		return config, nil
	}
	var stored map[string]json.RawMessage
	for _, sv := range cur.MCPServers {
		if sv.Name == name {
			_ = json.Unmarshal(sv.Config, &stored)
		}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(config, &m); err != nil {
		return nil, err
	}
	missing := func(key string) error {
		return fmt.Errorf("%s: %s is %q but no value is stored for it; send the value", name, key, Masked)
	}
	if isMasked(m["bearer_token"]) {
		if stored["bearer_token"] == nil {
			return nil, missing("bearer_token")
		}
		m["bearer_token"] = stored["bearer_token"]
	}
	for _, k := range []string{"headers", "env"} {
		var sent, old map[string]json.RawMessage
		if json.Unmarshal(m[k], &sent) != nil {
			continue // not a map: the Connector's parse says so
		}
		_ = json.Unmarshal(stored[k], &old)
		for h, v := range sent {
			if isMasked(v) {
				if old[h] == nil {
					return nil, missing(k + "." + h)
				}
				sent[h] = old[h]
			}
		}
		m[k], _ = json.Marshal(sent)
	}
	return json.Marshal(m)
}

func isMasked(v json.RawMessage) bool {
	var s string
	return v != nil && json.Unmarshal(v, &s) == nil && s == Masked
}

// ServerTool is one tool of a server, as [Set.ServerTools] lists it.
type ServerTool struct {
	// Name is the server's own name of the tool (what shared_tools lists).
	Name string `json:"name"`
	// Canonical is the name the tool gets in the catalog,
	// owner@server@tool.
	Canonical   string          `json:"canonical_name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ServerTools lists the tools of a server configuration the user gives,
// before it is saved: checked as a write checks it, connected for the
// listing only (bounded by the discovery timeout), then closed.
func (s *Set) ServerTools(ctx context.Context, userID string, raw json.RawMessage) ([]ServerTool, error) {
	sv, err := splitEntry(raw)
	if err != nil {
		return nil, invalid("server", err)
	}
	cur, err := s.configs.Get(ctx, userID)
	if err != nil {
		return nil, err
	}
	if sv.Config, err = unmask(sv.Name, sv.Config, cur); err != nil {
		return nil, invalid("server", err)
	}
	if _, err := s.conn.Check(ctx, sv.Config); err != nil {
		return nil, invalid("server "+sv.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.DiscoveryTimeout)
	defer cancel()
	c, err := s.conn.Open(ctx, sv.Config)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", orchestrator.ErrInvalidArgument, sv.Name, err)
	}
	defer func() { _ = c.Close() }()
	tools, err := c.Tools(ctx)
	if err != nil && len(tools) == 0 {
		return nil, fmt.Errorf("%w: %s: listing the server's tools failed: %v", orchestrator.ErrInvalidArgument, sv.Name, err)
	}
	out := []ServerTool{}
	for _, t := range tools {
		spec := t.Spec()
		bare, ok := strings.CutPrefix(spec.Name, sv.Name+"@")
		if !ok || strings.Contains(bare, "@") {
			continue
		}
		out = append(out, ServerTool{Name: bare, Canonical: userID + "@" + sv.Name + "@" + bare,
			Description: spec.Description, InputSchema: spec.InputSchema})
	}
	return out, nil
}

// invalid says that the input at where is refused: an error wrapping
// ErrInvalidArgument once, with err's text. An error that is no fault of
// the input (the caller went away, shutting down) is returned as it is.
func invalid(where string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, orchestrator.ErrUnavailable) {
		return fmt.Errorf("%s: %w", where, err)
	}
	msg := strings.ReplaceAll(err.Error(), orchestrator.ErrInvalidArgument.Error()+": ", "")
	return fmt.Errorf("%w: %s: %s", orchestrator.ErrInvalidArgument, where, msg)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
