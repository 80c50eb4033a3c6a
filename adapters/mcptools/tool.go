package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// tool is one remote tool as an [orchestrator.Tool], named server@tool.
type tool struct {
	sv     *server
	remote *mcp.Tool
}

var _ orchestrator.Tool = (*tool)(nil)

func newTool(sv *server, t *mcp.Tool) *tool { return &tool{sv: sv, remote: t} }

// Spec implements [orchestrator.Tool].
func (t *tool) Spec() orchestrator.ToolSpec {
	desc := t.remote.Description
	if desc == "" {
		desc = t.remote.Title
	}
	if desc == "" {
		desc = fmt.Sprintf("Tool %s of the MCP server %s.", t.remote.Name, t.sv.cfg.Name)
	}
	if d := t.sv.cfg.Description; d != "" {
		desc = "(" + t.sv.cfg.Name + ": " + d + ") " + desc
	}
	schema, err := json.Marshal(t.remote.InputSchema)
	if err != nil || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	ro := t.remote.Annotations != nil && t.remote.Annotations.ReadOnlyHint
	return orchestrator.ToolSpec{
		Name: t.sv.cfg.Name + "@" + t.remote.Name, Description: desc,
		InputSchema: schema, Source: "mcp", ReadOnly: ro,
		Meta: t.remote.Meta, AppOnly: AppOnly(t.remote.Meta),
	}
}

// Call implements [orchestrator.Tool]. Every failure — server down, timeout,
// crash mid-call, a malformed result — is an error result the model reads;
// only the run's own cancellation is returned as an error.
func (t *tool) Call(ctx context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	name := t.sv.cfg.Name + "@" + t.remote.Name
	args := inv.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	// MCP arguments are an object (the spec's CallToolRequest); a server
	// that does not validate them would run the tool on anything else.
	if trimmed := bytes.TrimSpace(args); len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return orchestrator.ErrorResult(fmt.Sprintf("the arguments of %s must be a JSON object", name)), nil
	}
	t.sv.begin()
	defer t.sv.end()
	cctx, cancel := context.WithTimeout(ctx, t.sv.cfg.Timeout)
	defer cancel()
	cs, err := t.sv.session(cctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return orchestrator.ErrorResult(fmt.Sprintf("MCP server %s is unavailable: %v", t.sv.cfg.Name, err)), nil
	}
	params := &mcp.CallToolParams{Name: t.remote.Name, Arguments: args, Meta: traceMeta(ctx, nil)}
	if inv.Output != nil {
		token, untrack := t.sv.track(inv.Output)
		defer untrack()
		params.SetProgressToken(token)
	}
	res, err := cs.CallTool(cctx, params)
	switch {
	case err == nil:
		return convertResult(res), nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return orchestrator.ErrorResult(fmt.Sprintf("%s timed out after %s", name, t.sv.cfg.Timeout)), nil
	case errors.Is(err, mcp.ErrConnectionClosed):
		t.sv.drop(cs) // the next call connects again (restarting a stdio child)
		return orchestrator.ErrorResult(fmt.Sprintf("%s failed: the MCP server went away: %v", name, err)), nil
	default:
		return orchestrator.ErrorResult(fmt.Sprintf("%s failed: %v", name, err)), nil
	}
}

// convertResult renders content blocks as text; structured content goes to
// Data (and to the text when there is no text).
func convertResult(res *mcp.CallToolResult) *orchestrator.ToolResult {
	var b strings.Builder
	for _, c := range res.Content {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		switch c := c.(type) {
		case *mcp.TextContent:
			b.WriteString(c.Text)
		case *mcp.ImageContent:
			fmt.Fprintf(&b, "[image %s, %d bytes]", c.MIMEType, len(c.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(&b, "[audio %s, %d bytes]", c.MIMEType, len(c.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(&b, "[resource %s %s]", c.Name, c.URI)
		case *mcp.EmbeddedResource:
			if r := c.Resource; r != nil && r.Text != "" {
				b.WriteString(r.Text)
			} else if r != nil {
				fmt.Fprintf(&b, "[resource %s, %d bytes]", r.URI, len(r.Blob))
			}
		default:
			raw, _ := json.Marshal(c)
			b.Write(raw)
		}
	}
	out := &orchestrator.ToolResult{IsError: res.IsError, Data: res.StructuredContent}
	if b.Len() == 0 && res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		b.Write(raw)
	}
	out.Content = b.String()
	return out
}
