package connectapi_test

import (
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"

	"github.com/wunder/wunder/gateway/connectapi"
	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	ot "github.com/wunder/wunder/orchestrator/orchestratortest"
)

// The catalog carries JSON Schemas as Structs and wire names; sessions
// list in pages, carry their history, and delete.
func TestToolsAndSessions(t *testing.T) {
	e := newEnv(t, envOpts{turns: []ot.Turn{{Content: "answer"}}})
	c := e.clients(protocols[1])
	ctx := t.Context()

	tools, err := c.tools.ListTools(ctx, connect.NewRequest(&wunderv1.ListToolsRequest{UserId: "fay"}))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools.Msg.GetTools(), func(tl *wunderv1.Tool) bool { return tl.GetName() == "write_file" })
	if i < 0 {
		t.Fatalf("no write_file in %v", tools.Msg.GetTools())
	}
	wf := tools.Msg.GetTools()[i]
	if wf.GetInputSchema().AsMap()["type"] != "object" || wf.GetWireName() != "write_file" {
		t.Errorf("write_file = %v", wf)
	}

	var sessions []string
	for range 3 {
		s, err := c.runs.Run(ctx, connect.NewRequest(&wunderv1.RunRequest{UserId: "fay", Question: "hello there"}))
		if err != nil {
			t.Fatal(err)
		}
		evs := collect(t, s)
		sessions = append(sessions, evs[0].GetSessionId())
	}
	// A second run in the first session: its history grows.
	s, err := c.runs.Run(ctx, connect.NewRequest(&wunderv1.RunRequest{UserId: "fay", Question: "again", SessionId: sessions[0]}))
	if err != nil {
		t.Fatal(err)
	}
	collect(t, s)

	var listed []string
	token := ""
	for {
		res, err := c.sessions.ListSessions(ctx, connect.NewRequest(&wunderv1.ListSessionsRequest{UserId: "fay", PageSize: 2, PageToken: token}))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range res.Msg.GetSessions() {
			if s.GetUserId() != "fay" || s.GetTitle() == "" || s.GetCreateTime() == nil {
				t.Errorf("session = %v", s)
			}
			listed = append(listed, s.GetSessionId())
		}
		if token = res.Msg.GetNextPageToken(); token == "" {
			break
		}
	}
	slices.Sort(listed)
	want := slices.Clone(sessions)
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Fatalf("listed %v, want %v", listed, want)
	}

	hist, err := c.sessions.GetSession(ctx, connect.NewRequest(&wunderv1.GetSessionRequest{UserId: "fay", SessionId: sessions[0]}))
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range hist.Msg.GetMessages() {
		roles = append(roles, m.GetRole())
	}
	if !slices.Equal(roles, []string{"user", "assistant", "user", "assistant"}) || hist.Msg.GetMessages()[2].GetContent() != "again" {
		t.Fatalf("history roles %v: %v", roles, hist.Msg.GetMessages())
	}
	last, err := c.sessions.GetSession(ctx, connect.NewRequest(&wunderv1.GetSessionRequest{SessionId: sessions[0], HistoryLimit: 1}))
	if err != nil || len(last.Msg.GetMessages()) != 1 {
		t.Fatalf("history_limit 1: %v %v", last, err)
	}
	// Another user does not see it.
	_, err = c.sessions.GetSession(ctx, connect.NewRequest(&wunderv1.GetSessionRequest{UserId: "gus", SessionId: sessions[0]}))
	if connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("another user's session: %v", err)
	}

	// RenameSession: the title trimmed; a bad one INVALID_ARGUMENT naming the limit; another user's NOT_FOUND.
	renamed, err := c.sessions.RenameSession(ctx, connect.NewRequest(&wunderv1.RenameSessionRequest{UserId: "fay", SessionId: sessions[0], Title: "  Trip notes  "}))
	if err != nil || renamed.Msg.GetSession().GetTitle() != "Trip notes" || renamed.Msg.GetSession().GetSessionId() != sessions[0] {
		t.Fatalf("RenameSession: %v %v", renamed, err)
	}
	_, err = c.sessions.RenameSession(ctx, connect.NewRequest(&wunderv1.RenameSessionRequest{UserId: "fay", SessionId: sessions[0], Title: strings.Repeat("x", 201)}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "the limit is 200") {
		t.Fatalf("a 201-character title: %v", err)
	}
	_, err = c.sessions.RenameSession(ctx, connect.NewRequest(&wunderv1.RenameSessionRequest{UserId: "gus", SessionId: sessions[0], Title: "mine"}))
	if connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("another user's session renamed: %v", err)
	}
	if got, err := c.sessions.GetSession(ctx, connect.NewRequest(&wunderv1.GetSessionRequest{UserId: "fay", SessionId: sessions[0]})); err != nil || got.Msg.GetSession().GetTitle() != "Trip notes" {
		t.Fatalf("the title after the refused renames: %v %v", got, err)
	}

	if _, err := c.sessions.DeleteSession(ctx, connect.NewRequest(&wunderv1.DeleteSessionRequest{UserId: "fay", SessionId: sessions[0]})); err != nil {
		t.Fatal(err)
	}
	_, err = c.sessions.GetSession(ctx, connect.NewRequest(&wunderv1.GetSessionRequest{UserId: "fay", SessionId: sessions[0]}))
	if connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("deleted session: %v", err)
	}
}

// gRPC health answers SERVING (and NOT_FOUND for unknown services);
// reflection lists the services, over v1 and v1alpha.
func TestHealthAndReflection(t *testing.T) {
	e := newEnv(t, envOpts{})
	hc := e.httpClient(true)
	health := grpchealth.NewClient(hc, e.srv.URL, connect.WithGRPC())
	for _, svc := range []string{"", "wunder.v1.RunService"} {
		res, err := health.Check(t.Context(), &grpchealth.CheckRequest{Service: svc})
		if err != nil || res.Status != grpchealth.StatusServing {
			t.Errorf("health %q: %v %v", svc, res, err)
		}
	}
	if _, err := health.Check(t.Context(), &grpchealth.CheckRequest{Service: "nope.Service"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("health of an unknown service: %v", err)
	}

	{
		rc := grpcreflect.NewClient(hc, e.srv.URL, connect.WithGRPC())
		stream := rc.NewStream(t.Context())
		names, err := stream.ListServices()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range names {
			got = append(got, string(n))
		}
		for _, want := range connectapi.Services {
			if !slices.Contains(got, want) {
				t.Errorf("reflection lists %v, missing %s", got, want)
			}
		}
		files, err := stream.FileContainingSymbol("wunder.v1.RunService")
		if err != nil || len(files) == 0 {
			t.Fatalf("FileContainingSymbol: %v %v", files, err)
		}
		if _, err := stream.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
