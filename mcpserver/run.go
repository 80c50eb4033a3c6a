package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// RunInput is the input of wunder@run.
type RunInput struct {
	Task      string   `json:"task" jsonschema:"the task to run, in natural language"`
	SessionID string   `json:"session_id,omitempty" jsonschema:"continue this session (conversation); omit to start a new one"`
	ToolNames []string `json:"tool_names,omitempty" jsonschema:"tools the agent may use (names from wunder's catalog); omit for none"`
	// PreloadSkills are loaded from the run's first model call on.
	PreloadSkills []string `json:"preload_skills,omitempty" jsonschema:"skills loaded from the start (names from wunder's catalog, e.g. code-review or alice@review)"`
}

// RunOutput is the structured result of wunder@run.
type RunOutput struct {
	Answer     string             `json:"answer"`
	SessionID  string             `json:"session_id"`
	RunID      string             `json:"run_id"`
	Usage      orchestrator.Usage `json:"usage"`
	StopReason string             `json:"stop_reason"`
}

func (h *Handler) addRunTool(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{
		Name:  h.runName(),
		Title: "Run a task with wunder",
		Description: "Runs a task with wunder's agent (an LLM with tools) and returns its answer, the session id " +
			"(pass it back to continue the conversation), the run id and the token usage. Progress is reported " +
			"while the task runs; cancelling the call cancels the run.",
	}, h.run)
}

// run is wunder@run: decode, start, follow the event log, encode.
func (h *Handler) run(ctx context.Context, req *mcp.CallToolRequest, in RunInput) (*mcp.CallToolResult, RunOutput, error) {
	if strings.TrimSpace(in.Task) == "" {
		return nil, RunOutput{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "task is required"}
	}
	user := h.userOf(req.Extra)
	run, err := h.b.Start(ctx, orchestrator.RunRequest{
		UserID: user, SessionID: in.SessionID, Question: in.Task, ToolNames: in.ToolNames, PreloadSkills: in.PreloadSkills,
		ExcludeTools: []string{RunTool}, Caller: orchestrator.CallerAgent,
	})
	if err != nil {
		return failed(err)
	}
	token := req.Params.GetProgressToken()
	out := RunOutput{SessionID: run.SessionID, RunID: run.ID}
	n := 0
	for ev, err := range h.b.Events(ctx, user, run.ID, 0) {
		if err != nil {
			if ctx.Err() != nil {
				// The caller cancelled the call (or went away): cancel the run.
				_, _ = h.b.Cancel(context.WithoutCancel(ctx), user, run.ID)
				return nil, RunOutput{}, ctx.Err()
			}
			return failed(err)
		}
		n++
		if token != nil && ev.Type != orchestrator.EventFinal {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(n), Message: progressMessage(ev),
			})
		}
		if ev.Type == orchestrator.EventFinal {
			var fd orchestrator.FinalData
			if err := json.Unmarshal(ev.Data, &fd); err != nil {
				return failed(fmt.Errorf("final event: %w", err))
			}
			out.Answer, out.Usage, out.StopReason = fd.Answer, fd.Usage, string(fd.StopReason)
			text, _ := json.Marshal(out)
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
			if fd.State != orchestrator.RunFinished {
				res.IsError = true
				res.Content = append(res.Content, &mcp.TextContent{Text: "run " + string(fd.State) + ": " + fd.Error})
			}
			return res, out, nil
		}
	}
	if ctx.Err() != nil {
		_, _ = h.b.Cancel(context.WithoutCancel(ctx), user, run.ID)
		return nil, RunOutput{}, ctx.Err()
	}
	return failed(fmt.Errorf("%w: the event log of run %s ended without a final event", orchestrator.ErrUnavailable, run.ID))
}

func failed(err error) (*mcp.CallToolResult, RunOutput, error) {
	text, rpcErr := toolError(err)
	if rpcErr != nil {
		return nil, RunOutput{}, rpcErr
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, RunOutput{}, nil
}

// progressMessage summarises an event in one line.
func progressMessage(ev orchestrator.Event) string {
	var d struct {
		Summary string `json:"summary"`
		Name    string `json:"name"`
		Delta   string `json:"delta"`
	}
	_ = json.Unmarshal(ev.Data, &d)
	msg := ev.Type
	for _, s := range []string{d.Summary, d.Name, d.Delta} {
		if s != "" {
			msg += ": " + s
			break
		}
	}
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return msg
}
