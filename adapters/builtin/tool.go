package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/wunder/wunder/orchestrator"
)

// toolDef is one built-in tool, unbound: its spec and its handler.
type toolDef struct {
	name        string
	aliases     []string
	description string
	schema      string // JSON Schema of the arguments
	readOnly    bool
	editsFiles  bool // changes workspace files and nothing else (approval mode auto_edit lets it run)
	run         func(ctx context.Context, c *call) (*orchestrator.ToolResult, error)

	// spec is built once (specOnce): every run that may use the tool
	// asks for it, several times.
	specOnce sync.Once
	spec     orchestrator.ToolSpec
}

// call is what a handler gets: the set's options, the caller's workspace and
// the invocation.
type call struct {
	set *Set
	ws  *Workspace
	inv *orchestrator.ToolInvocation
}

// output streams a delta; a no-op when the invocation has no Output.
func (c *call) output(stream, delta string) {
	if c.inv.Output != nil && delta != "" {
		c.inv.Output(stream, delta)
	}
}

// catalog lists the built-in tools in the order they are offered.
var catalog = []*toolDef{
	listFilesDef,
	readFileDef,
	searchContentDef,
	writeFileDef,
	replaceTextDef,
	editFileDef,
	executeCommandDef,
	ptcDef,
	artifactDef,
	a2uiDef,
}

// lookupDef finds a tool by canonical name or alias.
func lookupDef(name string) *toolDef {
	for _, d := range catalog {
		if d.hasName(name) {
			return d
		}
	}
	return nil
}

func (d *toolDef) hasName(name string) bool {
	return d.name == name || slices.Contains(d.aliases, name)
}

// boundTool is a toolDef bound to one user's workspace.
type boundTool struct {
	def *toolDef
	set *Set
	ws  *Workspace
}

var _ orchestrator.Tool = (*boundTool)(nil)

// Spec implements [orchestrator.Tool].
func (t *boundTool) Spec() orchestrator.ToolSpec {
	d := t.def
	d.specOnce.Do(func() {
		d.spec = orchestrator.ToolSpec{
			Name:        d.name,
			Aliases:     slices.Clone(d.aliases),
			Description: d.description,
			InputSchema: json.RawMessage(d.schema),
			Source:      "builtin",
			ReadOnly:    d.readOnly,
			EditsFiles:  d.editsFiles,
		}
	})
	return d.spec
}

// Call implements [orchestrator.Tool]. Failures are error results; only a
// cancelled context (and a recovered panic) is returned as an error.
func (t *boundTool) Call(ctx context.Context, inv *orchestrator.ToolInvocation) (res *orchestrator.ToolResult, err error) {
	if inv == nil {
		inv = &orchestrator.ToolInvocation{}
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("builtin: %s panicked: %v", t.def.name, p)
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return t.def.run(ctx, &call{set: t.set, ws: t.ws, inv: inv})
}

// errorf is the usual failure: an error result the model reads.
func errorf(format string, args ...any) (*orchestrator.ToolResult, error) {
	return orchestrator.ErrorResult(fmt.Sprintf(format, args...)), nil
}
