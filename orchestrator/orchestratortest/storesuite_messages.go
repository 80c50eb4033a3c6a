package orchestratortest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

func (st *storeSuite) messageTests() map[string]func(*testing.T) {
	return map[string]func(*testing.T){
		"AppendOrder": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			createSession(t, s, "s2", "u1", at(0))
			var want []orchestrator.Message
			for i := range 7 {
				m := orchestrator.Message{Role: orchestrator.RoleUser, Content: fmt.Sprintf("m%d", i), RunID: "r1", CreatedAt: at(-time.Duration(i) * time.Second)}
				want = append(want, m)
			}
			// Append order wins over CreatedAt order.
			mustDo(t, "AppendMessages", s.AppendMessages(ctx, "s1", want[:3]))
			mustDo(t, "AppendMessages", s.AppendMessages(ctx, "s2", []orchestrator.Message{{Role: "user", Content: "elsewhere", CreatedAt: at(0)}}))
			mustDo(t, "AppendMessages", s.AppendMessages(ctx, "s1", want[3:4]))
			mustDo(t, "AppendMessages", s.AppendMessages(ctx, "s1", want[4:]))
			for i := range want {
				want[i].CreatedAt = us(want[i].CreatedAt)
			}
			for _, c := range []struct {
				limit int
				want  []orchestrator.Message
			}{{0, want}, {-1, want}, {3, want[4:]}, {1, want[6:]}, {7, want}, {100, want}} {
				got, err := s.ListMessages(ctx, "s1", c.limit)
				mustDo(t, "ListMessages", err)
				diff(t, fmt.Sprintf("ListMessages(limit %d)", c.limit), c.want, got)
			}
			wantLen(t, "ListMessages(unknown session)", 0, size(s.ListMessages(ctx, "nope", 0)))
		},
		"Attachments": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			in := []orchestrator.Message{
				{Role: orchestrator.RoleUser, Content: "see files", RunID: "r1", CreatedAt: at(0), Attachments: []orchestrator.Attachment{
					{Type: orchestrator.AttachmentFile, Name: "r.pdf", MimeType: "application/pdf", Content: "# Report\n\n| a | b |", Size: 1234},
					{Type: orchestrator.AttachmentImage, Name: "p.png", MimeType: "image/png", Content: "data:image/png;base64,iVBORw0KGgo=", Size: 8},
					{Type: orchestrator.AttachmentText, Name: "n", Content: "notes ✓"},
				}},
				{Role: orchestrator.RoleAssistant, Content: "ok", RunID: "r1", CreatedAt: at(1)},
			}
			mustDo(t, "AppendMessages", s.AppendMessages(ctx, "s1", in))
			got, err := s.ListMessages(ctx, "s1", 0)
			mustDo(t, "ListMessages", err)
			want := cloneMessages(in)
			for i := range want {
				want[i].CreatedAt = us(want[i].CreatedAt)
			}
			diff(t, "ListMessages", want, got)
		},
		"ToolCalls": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			in := []orchestrator.Message{
				{Role: orchestrator.RoleSystem, Content: "sys", CreatedAt: at(0)},
				{Role: orchestrator.RoleAssistant, ReasoningContent: "thinking… 🤔", CreatedAt: at(1), RunID: "r1",
					ToolCalls: []orchestrator.ToolCall{
						// Arguments keep their exact bytes: spacing, key order, escapes, even invalid JSON a model produced.
						{ID: "call_1", Name: "fs@read_file", Arguments: json.RawMessage(`{ "path": "a<b>.go",  "z": 1, "a": "\u00e9" }`)},
						{ID: "call_2", Name: "lsp@hover", Arguments: json.RawMessage(`{"broken": `)},
						{ID: "call_3", Name: "noargs"},
					}},
				{Role: orchestrator.RoleTool, Content: `{"ok":true}`, ToolCallID: "call_1", Name: "fs@read_file", RunID: "r1", CreatedAt: at(2)},
				{Role: orchestrator.RoleAssistant, Content: "done", ToolCalls: []orchestrator.ToolCall{}, CreatedAt: at(3)},
			}
			mustDo(t, "AppendMessages", s.AppendMessages(ctx, "s1", in))
			want := cloneMessages(in)
			for i := range want {
				want[i].CreatedAt = us(want[i].CreatedAt)
			}
			want[3].ToolCalls = nil // empty round-trips as nil
			got, err := s.ListMessages(ctx, "s1", 0)
			mustDo(t, "ListMessages", err)
			diff(t, "ListMessages", want, got)
		},
		"Errors": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			wantErr(t, "AppendMessages(unknown session)", s.AppendMessages(ctx, "nope", []orchestrator.Message{{Role: "user"}}), orchestrator.ErrNotFound)
			createSession(t, s, "s1", "u1", at(0))
			mustDo(t, "AppendMessages(empty)", s.AppendMessages(ctx, "s1", nil))
			wantLen(t, "ListMessages", 0, size(s.ListMessages(ctx, "s1", 0)))
		},
		"FillsTimeAndCopies": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			before := time.Now().Add(-time.Second)
			in := []orchestrator.Message{{Role: "assistant", ToolCalls: []orchestrator.ToolCall{{ID: "c", Name: "n", Arguments: json.RawMessage(`{"a":1}`)}}}}
			mustDo(t, "AppendMessages", s.AppendMessages(ctx, "s1", in))
			in[0].ToolCalls[0].Arguments[2] = 'X'
			in[0].Content = "changed"
			got, err := s.ListMessages(ctx, "s1", 0)
			mustDo(t, "ListMessages", err)
			if got[0].CreatedAt.Before(before) {
				t.Errorf("zero CreatedAt stored as %v; want now", got[0].CreatedAt)
			}
			got[0].ToolCalls[0].Arguments[2] = 'Y'
			again, err := s.ListMessages(ctx, "s1", 0)
			mustDo(t, "ListMessages", err)
			if string(again[0].ToolCalls[0].Arguments) != `{"a":1}` || again[0].Content != "" {
				t.Errorf("stored message changed through a caller's slice: %+v", again[0])
			}
		},
	}
}

func (st *storeSuite) toolLogTests() map[string]func(*testing.T) {
	return map[string]func(*testing.T){
		"Append": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			createRun(t, s, "r1", "s1", "u1", at(0))
			l := &orchestrator.ToolLog{RunID: "r1", SessionID: "s1", UserID: "u1", CallID: "c1", Tool: "fs@read_file",
				Arguments: json.RawMessage(`{"path": "ü.txt"}`), Result: strings.Repeat("x", 70_000), IsError: true, DurationMS: 12, CreatedAt: at(0)}
			mustDo(t, "AppendToolLog", s.AppendToolLog(ctx, l))
			// A tool log needs no run or session (direct tool calls have none).
			before := time.Now().Add(-time.Second)
			bare := &orchestrator.ToolLog{Tool: "builtin@now"}
			mustDo(t, "AppendToolLog(no run)", s.AppendToolLog(ctx, bare))
			if bare.CreatedAt.Before(before) {
				t.Errorf("AppendToolLog left CreatedAt %v; want now", bare.CreatedAt)
			}
			wantErr(t, "AppendToolLog(nil)", s.AppendToolLog(ctx, nil), orchestrator.ErrInvalidArgument)
		},
	}
}
