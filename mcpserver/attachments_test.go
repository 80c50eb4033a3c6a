package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// wunder@run takes attachments as POST /wunder does: declared in its input
// schema, converted before the run, refused naming the file.
func TestRunAttachments(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{}, orchestratortest.Turn{Content: "read it"})
	cs := connect(t, e.url+"/wunder/mcp", nil, nil)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name != "wunder__run" {
			continue
		}
		schema, _ := json.Marshal(tool.InputSchema)
		if !strings.Contains(string(schema), `"attachments"`) || !strings.Contains(string(schema), `"mime_type"`) {
			t.Errorf("the input schema lacks attachments: %s", schema)
		}
	}
	docx := doc2mdtest.DataURL("application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		doc2mdtest.DOCX("Spec", []string{"Must be fast."}, nil))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{
		"task": "review", "attachments": []map[string]string{{"type": "file", "name": "spec.docx", "content": docx}}}})
	if err != nil || res.IsError {
		t.Fatalf("run with a DOCX: %v %+v", err, res)
	}
	reqs := e.model.Requests()
	var user orchestrator.Message
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == orchestrator.RoleUser {
			user = m
		}
	}
	if !strings.Contains(user.Content, "# Spec") || !strings.Contains(user.Content, "[Attachment: spec.docx") {
		t.Errorf("the model's question: %q", user.Content)
	}

	calls := len(reqs)
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{
		"task": "review", "attachments": []map[string]string{{"type": "image", "name": "shot.png", "content": "data:image/png;base64,@@"}}}})
	if err == nil && !res.IsError {
		t.Fatal("a malformed image was accepted")
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	} else {
		msg = res.Content[0].(*mcp.TextContent).Text
	}
	if !strings.Contains(msg, "shot.png") {
		t.Errorf("the error %q does not name shot.png", msg)
	}
	if n := len(e.model.Requests()); n != calls {
		t.Errorf("a refused call reached the model (%d requests, want %d)", n, calls)
	}
}

// MaxBodyBytes bounds a request to /wunder/mcp: a call over it is
// refused, one under it goes through.
func TestRunBodyLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{MaxBodyBytes: 64 << 10}, orchestratortest.Turn{Content: "ok"})
	cs := connect(t, e.url+"/wunder/mcp", nil, nil)
	call := func(n int) error {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{
			"task": "read", "attachments": []map[string]string{{"type": "text", "name": "n.txt", "content": strings.Repeat("a", n)}}}})
		if err == nil && res.IsError {
			return errors.New(res.Content[0].(*mcp.TextContent).Text)
		}
		return err
	}
	if err := call(32 << 10); err != nil {
		t.Fatalf("32 KiB under a 64 KiB limit: %v", err)
	}
	if err := call(80 << 10); err == nil {
		t.Fatal("80 KiB over a 64 KiB limit was accepted")
	}
}
