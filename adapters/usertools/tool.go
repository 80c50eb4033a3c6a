package usertools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// userTool is one tool of a user's server, named owner@server@tool, as
// one user (the viewer) sees it.
type userTool struct {
	e     *entry
	inner orchestrator.Tool
	name  string // owner@server@tool
	bare  string // the server's own name of the tool
	// viewer is the user whose listing made it; another user than the
	// owner sees a shared tool.
	viewer string
}

var _ orchestrator.Tool = (*userTool)(nil)

// newUserTool wraps a connection's server@tool; nil for a tool whose name
// would make owner@server@tool ambiguous (an '@' in it).
func newUserTool(e *entry, t orchestrator.Tool, viewer string) *userTool {
	bare, ok := strings.CutPrefix(t.Spec().Name, e.key.name+"@")
	if !ok || bare == "" || strings.Contains(bare, "@") {
		return nil
	}
	return &userTool{e: e, inner: t, name: e.key.owner + "@" + e.key.name + "@" + bare, bare: bare, viewer: viewer}
}

// Spec implements [orchestrator.Tool]: the server's spec, renamed, with
// its owner; another user's tool says whose it is.
func (t *userTool) Spec() orchestrator.ToolSpec {
	s := t.inner.Spec()
	s.Name, s.Aliases, s.Owner, s.AlwaysOn = t.name, nil, t.e.key.owner, false
	if s.Source == "" {
		s.Source = orchestrator.SourceMCP
	}
	if t.viewer != t.e.key.owner {
		s.Description = fmt.Sprintf("(shared by %s) %s", t.e.key.owner, s.Description)
	}
	return s
}

// Call implements [orchestrator.Tool]: the call runs on the owner's
// connection with the caller's invocation as it is (their user id, run
// and session). What reaches another user than the owner has the owner's
// secrets cut out.
func (t *userTool) Call(ctx context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	if _, ok := t.e.acquire(); !ok {
		return orchestrator.ErrorResult(fmt.Sprintf("%s is no longer available: %v; list the tools again", t.name, errRetired)), nil
	}
	defer t.e.release()
	res, err := t.inner.Call(ctx, inv)
	if res == nil || inv.UserID == t.e.key.owner || len(t.e.secrets) == 0 {
		return res, err
	}
	out := *res
	out.Content = redact(out.Content, t.e.secrets)
	if out.Data != nil {
		if b, jerr := json.Marshal(out.Data); jerr == nil {
			if r := redact(string(b), t.e.secrets); r != string(b) {
				out.Data = r
			}
		}
	}
	return &out, err
}

// redacted replaces an owner's secret in what another user reads.
const redacted = "[redacted]"

// minSecret is the shortest value treated as a secret: shorter ones would
// cut common text to pieces.
const minSecret = 4

// redact cuts every secret out of s.
func redact(s string, secrets []string) string {
	for _, sec := range secrets {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	return s
}

// secretsOf lists what an mcp.servers entry holds secret, longest first:
// its URL (whose path or query may carry a token), the URL's password and
// query values, the bearer token and the values of headers and env. This
// mirrors the secret fields of config.MCPServer.
func secretsOf(config json.RawMessage) []string {
	var c struct {
		URL         string            `json:"url"`
		BearerToken string            `json:"bearer_token"`
		Headers     map[string]string `json:"headers"`
		Env         map[string]string `json:"env"`
	}
	_ = json.Unmarshal(config, &c)
	var out []string
	add := func(v string) {
		if len(v) >= minSecret && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	add(c.URL)
	if u, err := url.Parse(c.URL); err == nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
		add(u.RawQuery)
		for _, vs := range u.Query() {
			for _, v := range vs {
				add(v)
			}
		}
	}
	add(c.BearerToken)
	for _, v := range c.Headers {
		add(v)
	}
	for _, v := range c.Env {
		add(v)
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}
