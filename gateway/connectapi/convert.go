package connectapi

import (
	"encoding/json"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/orchestrator"
)

// Conversions between the core's types and wunder.v1 messages. Protobuf
// enums are closed lists, the core's states and stop reasons are strings:
// an unknown value becomes the UNSPECIFIED enum value.

var runStates = map[orchestrator.RunState]wunderv1.RunState{
	orchestrator.RunQueued:          wunderv1.RunState_RUN_STATE_QUEUED,
	orchestrator.RunRunning:         wunderv1.RunState_RUN_STATE_RUNNING,
	orchestrator.RunWaitingApproval: wunderv1.RunState_RUN_STATE_WAITING_APPROVAL,
	orchestrator.RunWaitingInput:    wunderv1.RunState_RUN_STATE_WAITING_INPUT,
	orchestrator.RunCancelling:      wunderv1.RunState_RUN_STATE_CANCELLING,
	orchestrator.RunFinished:        wunderv1.RunState_RUN_STATE_FINISHED,
	orchestrator.RunCancelled:       wunderv1.RunState_RUN_STATE_CANCELLED,
	orchestrator.RunFailed:          wunderv1.RunState_RUN_STATE_FAILED,
}

var stopReasons = map[orchestrator.StopReason]wunderv1.StopReason{
	orchestrator.StopModelResponse: wunderv1.StopReason_STOP_REASON_MODEL_RESPONSE,
	orchestrator.StopFinalTool:     wunderv1.StopReason_STOP_REASON_FINAL_TOOL,
	orchestrator.StopReply:         wunderv1.StopReason_STOP_REASON_REPLY,
	orchestrator.StopMaxRounds:     wunderv1.StopReason_STOP_REASON_MAX_ROUNDS,
	orchestrator.StopCancelled:     wunderv1.StopReason_STOP_REASON_CANCELLED,
	orchestrator.StopError:         wunderv1.StopReason_STOP_REASON_ERROR,
}

// coreState maps a requested state filter back to the core's name.
func coreState(s wunderv1.RunState) (orchestrator.RunState, error) {
	for k, v := range runStates {
		if v == s {
			return k, nil
		}
	}
	return "", invalid("states: %v is not a run state", s)
}

func coreMode(m wunderv1.ToolCallMode) (string, error) {
	switch m {
	case wunderv1.ToolCallMode_TOOL_CALL_MODE_UNSPECIFIED:
		return "", nil
	case wunderv1.ToolCallMode_TOOL_CALL_MODE_TOOL_CALL:
		return orchestrator.ModeToolCall, nil
	case wunderv1.ToolCallMode_TOOL_CALL_MODE_FUNCTION_CALL:
		return orchestrator.ModeFunctionCall, nil
	}
	return "", invalid("tool_call_mode: %d is not a tool call mode", int32(m))
}

func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func tsPtr(t *time.Time) *timestamppb.Timestamp {
	if t == nil {
		return nil
	}
	return ts(*t)
}

func usageProto(u orchestrator.Usage) *wunderv1.Usage {
	return &wunderv1.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens}
}

func runProto(r *orchestrator.Run) *wunderv1.Run {
	return &wunderv1.Run{
		RunId: r.ID, SessionId: r.SessionID, UserId: r.UserID,
		State: runStates[r.State], StopReason: stopReasons[r.StopReason],
		Question: r.Question, Answer: r.Answer, Error: r.Error, ModelName: r.ModelName,
		Usage: usageProto(r.Usage), LastSeq: r.LastSeq,
		CreateTime: ts(r.CreatedAt), StartTime: tsPtr(r.StartedAt), FinishTime: tsPtr(r.FinishedAt),
	}
}

func eventProto(ev orchestrator.Event) *wunderv1.Event {
	return &wunderv1.Event{
		RunId: ev.RunID, SessionId: ev.SessionID, Seq: ev.Seq, Type: ev.Type,
		// Stores keep microseconds: truncate, so a replay equals the live stream.
		Data: object(ev.Data), Time: ts(ev.Time.Truncate(time.Microsecond)),
	}
}

func sessionProto(s *orchestrator.Session) *wunderv1.Session {
	return &wunderv1.Session{
		SessionId: s.ID, UserId: s.UserID, Title: s.Title,
		CreateTime: ts(s.CreatedAt), UpdateTime: ts(s.UpdatedAt),
	}
}

func messageProto(m orchestrator.Message) *wunderv1.Message {
	out := &wunderv1.Message{
		Role: m.Role, Content: m.Content, ReasoningContent: m.ReasoningContent,
		ToolCallId: m.ToolCallID, Name: m.Name, RunId: m.RunID, CreateTime: ts(m.CreatedAt),
	}
	for _, c := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, &wunderv1.ToolCall{Id: c.ID, Name: c.Name, Arguments: object(c.Arguments)})
	}
	for _, a := range m.Attachments {
		out.Attachments = append(out.Attachments, &wunderv1.Attachment{Type: a.Type, Name: a.Name, Content: a.Content, MimeType: a.MimeType, Size: a.Size})
	}
	return out
}

func toolProto(s orchestrator.ToolSpec, wire, userID string) *wunderv1.Tool {
	return &wunderv1.Tool{
		Name: s.Name, WireName: wire, Aliases: s.Aliases, Description: s.Description,
		InputSchema: object(s.InputSchema), Source: s.Source, ReadOnly: s.ReadOnly, AlwaysOn: s.AlwaysOn,
		Owner: s.Owner, Group: orchestrator.GroupOf(s, userID),
	}
}

// object converts a JSON object to a Struct. Empty input (or JSON null) is
// nil; anything that is not a JSON object is kept as {"_raw": text}, so no
// byte a model produced is lost.
func object(raw json.RawMessage) *structpb.Struct {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s structpb.Struct
	if err := protojson.Unmarshal(raw, &s); err != nil {
		return &structpb.Struct{Fields: map[string]*structpb.Value{"_raw": structpb.NewStringValue(string(raw))}}
	}
	return &s
}
