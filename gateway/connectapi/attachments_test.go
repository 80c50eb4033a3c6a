package connectapi_test

import (
	"bytes"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/wunder/wunder/gateway/connectapi"
	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
	"github.com/wunder/wunder/orchestrator"
	ot "github.com/wunder/wunder/orchestrator/orchestratortest"
)

// Run takes attachments as POST /wunder does; the history returns them.
func TestRunAttachments(t *testing.T) {
	e := newEnv(t, envOpts{turns: []ot.Turn{{Content: "ok"}}, api: connectapi.Options{Attachments: doc2md.New(&doc2md.Options{MaxBytes: 8192})}})
	c := e.clients(protocols[0])
	docx := doc2mdtest.DataURL("application/octet-stream", doc2mdtest.DOCX("Brief", []string{"Two points."}, nil))
	s, err := c.runs.Run(t.Context(), connect.NewRequest(&wunderv1.RunRequest{UserId: "alice", Question: "read",
		Attachments: []*wunderv1.Attachment{{Type: "file", Name: "brief.docx", Content: docx}}}))
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, s)
	if f := final(t, evs); f["state"] != "finished" {
		t.Fatalf("final = %v", f)
	}
	reqs := e.model.Requests()
	var user orchestrator.Message
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == orchestrator.RoleUser {
			user = m
		}
	}
	if !strings.Contains(user.Content, "# Brief") || !strings.Contains(user.Content, "Two points.") {
		t.Errorf("the model's question: %q", user.Content)
	}
	hist, err := c.sessions.GetSession(t.Context(), connect.NewRequest(&wunderv1.GetSessionRequest{UserId: "alice", SessionId: evs[0].GetSessionId()}))
	if err != nil {
		t.Fatal(err)
	}
	q := hist.Msg.GetMessages()[0]
	if len(q.GetAttachments()) != 1 || q.GetAttachments()[0].GetName() != "brief.docx" || !strings.Contains(q.GetAttachments()[0].GetContent(), "# Brief") {
		t.Errorf("history question: %v", q)
	}

	// Refusals come before the run: too large, unsupported.
	calls := len(reqs)
	big := doc2mdtest.DataURL("text/plain", bytes.Repeat([]byte("a"), 9000))
	_, err = c.runs.Submit(t.Context(), connect.NewRequest(&wunderv1.SubmitRequest{UserId: "alice", Question: "q",
		Attachments: []*wunderv1.Attachment{{Type: "file", Name: "big.txt", Content: big}}}))
	if connect.CodeOf(err) != connect.CodeResourceExhausted || !strings.Contains(err.Error(), "big.txt") {
		t.Errorf("too large: %v; want RESOURCE_EXHAUSTED naming big.txt", err)
	}
	_, err = c.runs.Submit(t.Context(), connect.NewRequest(&wunderv1.SubmitRequest{UserId: "alice", Question: "q",
		Attachments: []*wunderv1.Attachment{{Type: "file", Name: "a.bin", Content: doc2mdtest.DataURL("application/octet-stream", []byte{0, 1, 2, 0xfe})}}}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "a.bin") {
		t.Errorf("unsupported: %v; want INVALID_ARGUMENT naming a.bin", err)
	}
	if n := len(e.model.Requests()); n != calls {
		t.Errorf("refused requests reached the model: %d requests, want %d", n, calls)
	}
}
