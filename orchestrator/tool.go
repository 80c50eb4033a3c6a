package orchestrator

import (
	"context"
	"encoding/json"
)

// ToolSpec describes a tool to the model and to clients.
type ToolSpec struct {
	// Name is canonical: "read_file", "server@tool", "a2a@service".
	Name string `json:"name"`
	// Aliases are other accepted names (e.g. the Chinese names users of
	// wunder know, "读取文件" for read_file).
	Aliases     []string        `json:"aliases,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// Source says where the tool comes from: one of the Source* constants
	// (builtin, mcp, a2a, lsp, skill, knowledge).
	Source string `json:"source"`
	// Owner is the user whose own configuration the tool comes from (a
	// user tool, canonical name "owner@tool"); "" for tools every user
	// has. See [GroupCatalog].
	Owner string `json:"owner,omitempty"`
	// ReadOnly tools never change the workspace; the loop runs them in
	// parallel with anything. Tools that are not read-only run in the order
	// the model asked for them, one after another, in parallel with the
	// read-only ones.
	ReadOnly bool `json:"read_only,omitempty"`
	// EditsFiles tools change files of the workspace and nothing else
	// (write_file, edit_file): approval mode auto_edit lets them run.
	EditsFiles bool `json:"edits_files,omitempty"`
	// AlwaysOn tools are offered whatever the request's tool_names say
	// (e.g. final_response).
	AlwaysOn bool `json:"always_on,omitempty"`
	// RunOnly tools make sense only inside a run (plan writes the run's
	// plan); they are not offered for direct calls outside one (the MCP
	// catalog, CallTool). AlwaysOn tools are run-only too.
	RunOnly bool `json:"run_only,omitempty"`
	// AppOnly tools are for MCP Apps alone: an MCP tool whose
	// _meta.ui.visibility leaves out "model". They are never offered to a
	// run's model ([Registry.Select] refuses them, the grouped catalog
	// leaves them out) and stay callable directly, by the app, through the
	// /wunder/mcp catalog ([Orchestrator.CallTool]).
	AppOnly bool `json:"app_only,omitempty"`
	// Meta is the tool's own metadata as its source declared it, for
	// front-ends that speak its protocol: an MCP tool's _meta (MCP Apps'
	// ui.resourceUri and ui.visibility among it); nil for most tools. It is
	// shared: read it, never change it.
	Meta map[string]any `json:"-"`
}

// Sources of tools ([ToolSpec.Source]).
const (
	SourceBuiltin   = "builtin"
	SourceMCP       = "mcp"
	SourceA2A       = "a2a"
	SourceLSP       = "lsp"
	SourceSkill     = "skill"
	SourceKnowledge = "knowledge"
)

// Tool is anything the model can call.
//
// Tool failures are results: a tool that fails returns a [ToolResult] with
// IsError set, which the model reads. A returned error is also shown to the
// model as an error result, except a context error of a cancelled run.
type Tool interface {
	Spec() ToolSpec
	Call(ctx context.Context, inv *ToolInvocation) (*ToolResult, error)
}

// ToolInvocation carries one call's arguments and context.
type ToolInvocation struct {
	UserID    string
	SessionID string
	RunID     string
	CallID    string
	Arguments json.RawMessage
	// Output streams partial output; it becomes a tool_output_delta event.
	// Never nil when called by the loop, and safe for concurrent use.
	Output func(stream, delta string)
	// Metadata is the run's RunRequest.Metadata (read-only; may be nil).
	Metadata map[string]string
	// ModelName is the name of the model the run uses ([ModelSettings.Name]),
	// for tools that ask the same model something (a knowledge base's
	// rerank); "" when unknown.
	ModelName string
	// Emit appends an event of the given type to the run's event log (e.g.
	// a2a_request, a2a_status, a2a_result); data is marshalled to JSON.
	// final and error are refused: only the loop ends a run.
	// Never nil when called by the loop, and safe for concurrent use.
	Emit func(eventType string, data any)
}

// ToolResult is what the model sees of a call.
type ToolResult struct {
	Content string
	IsError bool
	// Data is an optional structured result, passed through to events.
	Data any
}

// ErrorResult returns an error result with msg.
func ErrorResult(msg string) *ToolResult { return &ToolResult{Content: msg, IsError: true} }

// Toolset yields the tools a user may use. The registry merges toolsets and
// asks them again for every run, so tools may be bound to the user.
type Toolset interface {
	// Name identifies the source (builtin, mcp, ...), for logs and errors.
	Name() string
	Tools(ctx context.Context, userID string) ([]Tool, error)
}

// AlwaysOnLister is implemented by a [Toolset] that says which of its tools
// are always on without building its tools for the user. A run that names
// no tool (most runs of agents) is offered those alone ([Registry.Select]),
// and asking every toolset for all its tools to find them was a tenth of
// such a run's tool selection. A toolset without it is asked for all its
// tools, which are filtered.
type AlwaysOnLister interface {
	AlwaysOnTools(ctx context.Context, userID string) ([]Tool, error)
}

// NoAlwaysOnTools is an [AlwaysOnLister] with none: a toolset none of
// whose tools is always on (every one of wunder's tool sources) embeds it.
type NoAlwaysOnTools struct{}

// AlwaysOnTools implements [AlwaysOnLister]: none.
func (NoAlwaysOnTools) AlwaysOnTools(context.Context, string) ([]Tool, error) { return nil, nil }

// ToolWaiter is implemented by a [Toolset] whose tools arrive after start
// (the first discovery of an MCP server runs in the background). For a name
// that no toolset offers, [Registry.Select] asks each ToolWaiter before it
// gives up: WaitTool returns once the toolset's source of that canonical
// name has loaded or failed to, bounded by ctx and the toolset's own
// timeout. mine is false when the name is none of the toolset's business
// (then it returns at once); err, when set, says why the toolset cannot
// offer the name, and goes into the [ErrToolNotFound] error.
type ToolWaiter interface {
	WaitTool(ctx context.Context, name string) (mine bool, err error)
}

// StaticToolset is a [Toolset] with a fixed list of tools.
type StaticToolset struct {
	SetName string
	List    []Tool
}

// Name implements [Toolset].
func (s StaticToolset) Name() string { return s.SetName }

// Tools implements [Toolset].
func (s StaticToolset) Tools(context.Context, string) ([]Tool, error) { return s.List, nil }

// Workspace gives the prompt builder a short summary of a user's workspace.
// Implemented by adapters/builtin; nil means no summary.
type Workspace interface {
	Summary(ctx context.Context, userID string) (string, error)
}
