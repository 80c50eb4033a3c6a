package mcpserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/orchestrator"
)

// RunInput is the input of wunder@run.
type RunInput struct {
	Task      string   `json:"task" jsonschema:"the task to run, in natural language"`
	SessionID string   `json:"session_id,omitempty" jsonschema:"continue this session (conversation); omit to start a new one"`
	ToolNames []string `json:"tool_names,omitempty" jsonschema:"tools the agent may use (names from wunder's catalog); omit for none"`
	// PreloadSkills are loaded from the run's first model call on.
	PreloadSkills []string `json:"preload_skills,omitempty" jsonschema:"skills loaded from the start (names from wunder's catalog, e.g. code-review or alice@review)"`
	// ApprovalMode is the run's approval mode ("" = approvals.mode).
	ApprovalMode string `json:"approval_mode,omitempty" jsonschema:"which tool calls wait for a person's approval: suggest (every tool that changes things), auto_edit (all but file edits) or full_auto (only those the server's policy names); omit for the server's default"`
	// Attachments go with the task, as POST /wunder's attachments.
	Attachments []RunAttachment `json:"attachments,omitempty" jsonschema:"files for the task: documents (PDF, DOCX, XLSX, PPTX, HTML, CSV, text) are converted to Markdown, images are shown to models with vision"`
}

// RunAttachment is one attachment of wunder@run, as POST /wunder takes it.
type RunAttachment struct {
	Type     string `json:"type" jsonschema:"text, file or image"`
	Name     string `json:"name,omitempty" jsonschema:"the file name, used in errors and shown to the model"`
	Content  string `json:"content" jsonschema:"the text for type text; a data URL (data:<mime>;base64,...) for file and image"`
	MimeType string `json:"mime_type,omitempty" jsonschema:"the media type, a hint: the type is sniffed from the content"`
}

// RunOutput is the structured result of wunder@run and wunder@approve:
// a finished (or failed, cancelled) run's answer, or, with state
// waiting_approval, the approvals it waits for.
type RunOutput struct {
	Answer     string                `json:"answer,omitempty"`
	SessionID  string                `json:"session_id"`
	RunID      string                `json:"run_id"`
	State      orchestrator.RunState `json:"state"`
	Usage      *orchestrator.Usage   `json:"usage,omitempty"`
	StopReason string                `json:"stop_reason,omitempty"`
	// Approvals are what a waiting run asks; decide each with
	// wunder@approve.
	Approvals []PendingApproval `json:"approvals,omitempty"`
}

func (h *Handler) addRunTool(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{
		Name:  h.runName(),
		Title: "Run a task with wunder",
		Description: "Runs a task with wunder's agent (an LLM with tools) and returns its answer, the session id " +
			"(pass it back to continue the conversation), the run id and the token usage. Progress is reported " +
			"while the task runs; cancelling the call cancels the run. When a tool call needs a person's approval, " +
			"wunder asks through elicitation if the client supports it; otherwise the result has state " +
			"waiting_approval and lists the approvals: decide each with " + h.approveName() + ".",
	}, h.run)
}

// run is wunder@run: decode, start, follow the event log, encode.
func (h *Handler) run(ctx context.Context, req *mcp.CallToolRequest, in RunInput) (*mcp.CallToolResult, RunOutput, error) {
	if req.Params.RequestState != "" {
		return h.resume(ctx, req) // the retry of an input-required result
	}
	if strings.TrimSpace(in.Task) == "" {
		return nil, RunOutput{}, invalidParams(h.langOf(req.Extra), "task is required")
	}
	run, err := h.startRun(ctx, req, in, deliveryOf(req.Params.GetProgressToken()), nil)
	if err != nil {
		return failed(h.langOf(req.Extra), err)
	}
	f := &follower{h: h, req: req, user: h.userOf(req.Extra), runID: run.ID, sessionID: run.SessionID}
	return f.follow(ctx)
}

// startRun starts the run of a wunder@run call as the caller, read with
// delivery d; metadata goes with it (tasks.go marks a task's run so). Its
// errors are the core's (an unusable attachment is one before the run
// starts: nothing is stored).
func (h *Handler) startRun(ctx context.Context, req *mcp.CallToolRequest, in RunInput, d orchestrator.Delivery, metadata map[string]string) (*orchestrator.Run, error) {
	atts, err := h.attachments(ctx, in.Attachments)
	if err != nil {
		return nil, err
	}
	return h.b.Start(ctx, orchestrator.RunRequest{
		UserID: h.userOf(req.Extra), SessionID: in.SessionID, Question: in.Task, ToolNames: in.ToolNames, PreloadSkills: in.PreloadSkills,
		ExcludeTools: []string{RunTool, ApproveTool}, Caller: orchestrator.CallerAgent, Frontend: orchestrator.FrontendMCP, ApprovalMode: in.ApprovalMode,
		Attachments: atts, Delivery: d, Metadata: metadata,
	})
}

// attachments converts wunder@run's attachments (internal/doc2md); an
// unusable one is an invalid-params error naming it.
func (h *Handler) attachments(ctx context.Context, in []RunAttachment) ([]orchestrator.Attachment, error) {
	if len(in) == 0 {
		return nil, nil
	}
	conv := h.opts.Attachments
	if conv == nil {
		conv = defaultConverter
	}
	as := make([]orchestrator.Attachment, len(in))
	for i, a := range in {
		as[i] = orchestrator.Attachment{Type: a.Type, Name: a.Name, Content: a.Content, MimeType: a.MimeType}
	}
	return conv.Prepare(ctx, as)
}

var defaultConverter = doc2md.New(nil)

func failed(lang string, err error) (*mcp.CallToolResult, RunOutput, error) {
	text, rpcErr := toolError(lang, err)
	if rpcErr != nil {
		return nil, RunOutput{}, rpcErr
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, RunOutput{}, nil
}

// progressMessage summarises an event in one line, cut at
// maxProgressMessage bytes (on a rune's boundary). A delta of the model's
// output is given whole: the progress notifications are how the caller
// reads the answer as it grows, and one delta event may hold many chunks
// (the event log joins those it takes together; it bounds them).
func progressMessage(ev orchestrator.Event) string {
	var d struct {
		Summary string `json:"summary"`
		Name    string `json:"name"`
		Tool    string `json:"tool"`
		Delta   string `json:"delta"`
	}
	_ = json.Unmarshal(ev.Data, &d)
	msg := ev.Type
	for _, s := range []string{d.Summary, d.Name, d.Tool, d.Delta} {
		if s != "" {
			msg += ": " + s
			break
		}
	}
	if ev.Type == orchestrator.EventLLMOutputDelta {
		return msg
	}
	return orchestrator.CutText(msg, maxProgressMessage)
}

// maxProgressMessage bounds a progress message (but a delta's).
const maxProgressMessage = 200

// deliveryOf is how a wunder@run call reads its run: a call with a
// progress token follows it (progress notifications), one without waits
// for the end.
func deliveryOf(progressToken any) orchestrator.Delivery {
	if progressToken == nil {
		return orchestrator.DeliverBlocking
	}
	return orchestrator.DeliverFollowed
}
