package orchestratortest

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/wunder/wunder/orchestrator"
)

// FuncTool is a tool made of a spec and a function.
type FuncTool struct {
	S  orchestrator.ToolSpec
	Fn func(ctx context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error)
}

var _ orchestrator.Tool = (*FuncTool)(nil)

// Spec implements orchestrator.Tool.
func (t *FuncTool) Spec() orchestrator.ToolSpec { return t.S }

// Call implements orchestrator.Tool.
func (t *FuncTool) Call(ctx context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	return t.Fn(ctx, inv)
}

// NewTool returns a FuncTool with an object schema.
func NewTool(name string, readOnly bool, fn func(ctx context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error)) *FuncTool {
	return &FuncTool{
		S: orchestrator.ToolSpec{
			Name: name, Description: "test tool " + name, Source: "test", ReadOnly: readOnly,
			InputSchema: json.RawMessage(`{"type":"object"}`),
		},
		Fn: fn,
	}
}

// Files is an in-memory file store with write_file/read_file tools, enough
// to drive the loop without a real workspace.
type Files struct {
	// mu guards files.
	mu    sync.Mutex
	files map[string]string
}

// NewFiles returns an empty Files.
func NewFiles() *Files { return &Files{files: map[string]string{}} }

// Toolset returns write_file and read_file over f.
func (f *Files) Toolset() orchestrator.Toolset {
	write := NewTool("write_file", false, func(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		var a struct{ Path, Content string }
		if err := json.Unmarshal(inv.Arguments, &a); err != nil || a.Path == "" {
			return orchestrator.ErrorResult("write_file needs path and content"), nil
		}
		f.mu.Lock()
		f.files[inv.UserID+"/"+a.Path] = a.Content
		f.mu.Unlock()
		return &orchestrator.ToolResult{Content: "wrote " + a.Path}, nil
	})
	write.S.Aliases = []string{"写入文件"}
	read := NewTool("read_file", true, func(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		var a struct{ Path string }
		_ = json.Unmarshal(inv.Arguments, &a)
		f.mu.Lock()
		c, ok := f.files[inv.UserID+"/"+a.Path]
		f.mu.Unlock()
		if !ok {
			return orchestrator.ErrorResult("no such file: " + a.Path), nil
		}
		return &orchestrator.ToolResult{Content: c}, nil
	})
	read.S.Aliases = []string{"读取文件"}
	return orchestrator.StaticToolset{SetName: "files", List: []orchestrator.Tool{write, read}}
}

// Get returns a file's content.
func (f *Files) Get(userID, path string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.files[userID+"/"+path]
	return c, ok
}
