package connectapi_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/wunder/wunder/gateway/connectapi"
	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/orchestrator"
	ot "github.com/wunder/wunder/orchestrator/orchestratortest"
)

// page_size: 0 is 50, larger than 500 is 500, negative is refused.
func TestPageSize(t *testing.T) {
	for _, c := range []struct {
		size int32
		want int
	}{{0, 50}, {1, 1}, {500, 500}, {10000, 500}} {
		size, p, err := connectapi.PageOf(c.size, "")
		if err != nil || size != c.want || p.Limit != c.want+1 || p.After != nil {
			t.Errorf("PageOf(%d) = %d, %+v, %v; want %d from the top", c.size, size, p, err, c.want)
		}
	}
	if _, _, err := connectapi.PageOf(-1, ""); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Errorf("PageOf(-1) = %v; want an invalid argument", err)
	}
}

// ListRuns and ListSessions refuse, as INVALID_ARGUMENT naming
// page_token, a token of the other list, a token of their own list with
// another filter, an offset (the form tokens had before keyset pages)
// and garbage; on every wire protocol.
func TestListsRefuseForeignTokens(t *testing.T) {
	e := newEnv(t, envOpts{turns: []ot.Turn{{Content: "ok"}, {Content: "ok"}}})
	ctx := t.Context()
	c := e.clients(protocols[0])
	for range 2 {
		s, err := c.runs.Run(ctx, connect.NewRequest(&wunderv1.RunRequest{UserId: "gus", Question: "q"}))
		if err != nil {
			t.Fatal(err)
		}
		collect(t, s)
	}
	runs, err := c.runs.ListRuns(ctx, connect.NewRequest(&wunderv1.ListRunsRequest{UserId: "gus", PageSize: 1}))
	if err != nil || runs.Msg.GetNextPageToken() == "" {
		t.Fatalf("ListRuns(page of 1 of 2): %v, %v", runs, err)
	}
	sessions, err := c.sessions.ListSessions(ctx, connect.NewRequest(&wunderv1.ListSessionsRequest{UserId: "gus", PageSize: 1}))
	if err != nil || sessions.Msg.GetNextPageToken() == "" {
		t.Fatalf("ListSessions(page of 1 of 2): %v, %v", sessions, err)
	}
	runsToken, sessionsToken := runs.Msg.GetNextPageToken(), sessions.Msg.GetNextPageToken()
	offset := base64.RawURLEncoding.EncodeToString([]byte("v1.1.abc"))
	for _, p := range protocols {
		c := e.clients(p)
		listRuns := func(user, session, token string) error {
			_, err := c.runs.ListRuns(ctx, connect.NewRequest(&wunderv1.ListRunsRequest{UserId: user, SessionId: session, PageToken: token}))
			return err
		}
		listSessions := func(user, token string) error {
			_, err := c.sessions.ListSessions(ctx, connect.NewRequest(&wunderv1.ListSessionsRequest{UserId: user, PageToken: token}))
			return err
		}
		for _, tc := range []struct {
			name, detail string
			err          error
		}{
			{"ListRuns, a ListSessions token", "another list or filter", listRuns("gus", "", sessionsToken)},
			{"ListRuns, its token with another session", "another list or filter", listRuns("gus", "sess_x", runsToken)},
			{"ListRuns, an offset", "not a cursor this server issued", listRuns("gus", "", offset)},
			{"ListRuns, garbage", "not a cursor this server issued", listRuns("gus", "", "%%%")},
			{"ListSessions, a ListRuns token", "another list or filter", listSessions("gus", runsToken)},
			{"ListSessions, its token with another user", "another list or filter", listSessions("hal", sessionsToken)},
			{"ListSessions, garbage", "not a cursor this server issued", listSessions("gus", "bm8tZG90")},
		} {
			var ce *connect.Error
			if !errors.As(tc.err, &ce) || ce.Code() != connect.CodeInvalidArgument || !strings.Contains(ce.Message(), "page_token") || !strings.Contains(ce.Message(), tc.detail) {
				t.Errorf("%s, %s: %v; want INVALID_ARGUMENT naming page_token: %s", p.name, tc.name, tc.err, tc.detail)
			}
		}
		// Each token goes on with the list and filter it came from.
		if err := listRuns("gus", "", runsToken); err != nil {
			t.Errorf("%s: ListRuns with its own token: %v", p.name, err)
		}
		if err := listSessions("gus", sessionsToken); err != nil {
			t.Errorf("%s: ListSessions with its own token: %v", p.name, err)
		}
	}
}

func TestHandlersCoverReflectionVersions(t *testing.T) {
	h := connectapi.New(nil, nil).Handlers()
	for _, p := range []string{
		"/wunder.v1.RunService/", "/wunder.v1.SessionService/", "/wunder.v1.ToolService/",
		"/grpc.health.v1.Health/", "/grpc.reflection.v1.ServerReflection/", "/grpc.reflection.v1alpha.ServerReflection/",
	} {
		if h[p] == nil {
			t.Errorf("no handler for %s", p)
		}
	}
}

// Tool-call arguments come from model output: any bytes convert to a Struct
// (or nil for nothing) without a panic, and a JSON object keeps its keys.
func FuzzObject(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,null,"x"]}`, `[1,2]`, `"str"`, `null`, ``, `{"a":`, `{"n":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s := connectapi.Object(raw)
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil && m != nil && s != nil {
			if _, isRaw := s.GetFields()["_raw"]; !isRaw && len(s.GetFields()) != len(m) {
				t.Fatalf("%s -> %v", raw, s)
			}
		}
	})
}
