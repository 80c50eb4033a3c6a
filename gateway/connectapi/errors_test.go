package connectapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/gateway/connectapi"
	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/orchestrator"
	ot "github.com/wunder/wunder/orchestrator/orchestratortest"
)

// The table itself: every sentinel of the core (wrapped, as the core
// returns them) and the context errors, plus the fallback.
func TestErrorTable(t *testing.T) {
	api := connectapi.New(nil, nil)
	for _, tc := range []struct {
		err    error
		code   connect.Code
		reason string
	}{
		{fmt.Errorf("%w: x", orchestrator.ErrToolNotFound), connect.CodeInvalidArgument, "TOOL_NOT_FOUND"},
		{fmt.Errorf("%w: x", orchestrator.ErrInvalidArgument), connect.CodeInvalidArgument, "INVALID_ARGUMENT"},
		{fmt.Errorf("%w: x", orchestrator.ErrNotFound), connect.CodeNotFound, "NOT_FOUND"},
		{fmt.Errorf("%w: x", orchestrator.ErrConflict), connect.CodeFailedPrecondition, "CONFLICT"},
		{fmt.Errorf("%w: x", orchestrator.ErrBusy), connect.CodeResourceExhausted, "BUSY"},
		{fmt.Errorf("%w: x", orchestrator.ErrUnavailable), connect.CodeUnavailable, "UNAVAILABLE"},
		{fmt.Errorf("%w: x", orchestrator.ErrUnauthenticated), connect.CodeUnauthenticated, "UNAUTHENTICATED"},
		{fmt.Errorf("%w: x", orchestrator.ErrPermissionDenied), connect.CodePermissionDenied, "PERMISSION_DENIED"},
		{fmt.Errorf("%w: x", orchestrator.ErrCanceled), connect.CodeCanceled, "CANCELED"},
		{fmt.Errorf("read: %w", context.Canceled), connect.CodeCanceled, "CANCELED"},
		{fmt.Errorf("read: %w", context.DeadlineExceeded), connect.CodeDeadlineExceeded, "DEADLINE_EXCEEDED"},
		{errors.New("disk on fire"), connect.CodeInternal, ""},
	} {
		got := api.ToConnect(tc.err)
		if connect.CodeOf(got) != tc.code || errorInfoReason(got) != tc.reason {
			t.Errorf("%v -> %v (reason %q), want %v (%q)", tc.err, connect.CodeOf(got), errorInfoReason(got), tc.code, tc.reason)
		}
		if tc.code == connect.CodeInternal && strings.Contains(got.Error(), "fire") {
			t.Errorf("an internal error leaks its detail: %v", got)
		}
	}
}

// The same table end to end: each code reached through a real call, over
// each protocol.
func TestErrorsOverTheWire(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			started, wait := make(chan struct{}), make(chan struct{})
			e := newEnv(t, envOpts{
				orch:  orchestrator.Options{MaxActiveRuns: 2, QueueSize: -1, PerUserAgents: 1, QueueRetryAfter: 7 * time.Second},
				turns: []ot.Turn{{Content: "slow", Wait: wait, Started: started}, {Content: "slow", Wait: wait}},
			})
			t.Cleanup(func() { close(wait) }) // lets the blocked runs end before the env closes
			c := e.clients(p)
			ctx := t.Context()
			run := func(req *wunderv1.RunRequest) error {
				s, err := c.runs.Run(ctx, connect.NewRequest(req))
				if err != nil {
					return err
				}
				defer s.Close()
				if s.Receive() {
					return nil
				}
				return s.Err()
			}
			check := func(name string, err error, code connect.Code, reason string) {
				t.Helper()
				if connect.CodeOf(err) != code || (reason != "" && errorInfoReason(err) != reason) {
					t.Errorf("%s: %v (reason %q), want %v (%s)", name, err, errorInfoReason(err), code, reason)
				}
			}
			check("no user", run(&wunderv1.RunRequest{Question: "q"}), connect.CodeInvalidArgument, "INVALID_ARGUMENT")
			check("no question", run(&wunderv1.RunRequest{UserId: "u"}), connect.CodeInvalidArgument, "INVALID_ARGUMENT")
			check("bad mode", run(&wunderv1.RunRequest{UserId: "u", Question: "q", ToolCallMode: 9}), connect.CodeInvalidArgument, "")
			check("bad user", run(&wunderv1.RunRequest{UserId: "a/b", Question: "q"}), connect.CodeInvalidArgument, "")
			check("unknown tool", run(&wunderv1.RunRequest{UserId: "u", Question: "q", ToolNames: []string{"nope"}}), connect.CodeInvalidArgument, "TOOL_NOT_FOUND")
			check("unknown session", run(&wunderv1.RunRequest{UserId: "u", Question: "q", SessionId: "sess_nope"}), connect.CodeNotFound, "NOT_FOUND")

			_, err := c.runs.GetRun(ctx, connect.NewRequest(&wunderv1.GetRunRequest{RunId: "run_nope"}))
			check("unknown run", err, connect.CodeNotFound, "NOT_FOUND")
			_, err = c.runs.GetRun(ctx, connect.NewRequest(&wunderv1.GetRunRequest{}))
			check("no run id", err, connect.CodeInvalidArgument, "")
			f, err := c.runs.Follow(ctx, connect.NewRequest(&wunderv1.FollowRequest{RunId: "run_nope"}))
			if err == nil {
				for f.Receive() {
				}
				err = f.Err()
			}
			check("follow unknown run", err, connect.CodeNotFound, "NOT_FOUND")
			_, err = c.runs.ListRuns(ctx, connect.NewRequest(&wunderv1.ListRunsRequest{PageToken: "%%%"}))
			check("bad token", err, connect.CodeInvalidArgument, "")
			_, err = c.runs.ListRuns(ctx, connect.NewRequest(&wunderv1.ListRunsRequest{PageSize: -1}))
			check("negative page size", err, connect.CodeInvalidArgument, "")
			_, err = c.sessions.ListSessions(ctx, connect.NewRequest(&wunderv1.ListSessionsRequest{}))
			check("sessions without user", err, connect.CodeInvalidArgument, "")
			_, err = c.tools.ListTools(ctx, connect.NewRequest(&wunderv1.ListToolsRequest{}))
			check("tools without user", err, connect.CodeInvalidArgument, "")

			// One running run per user for this test's agent limit.
			if err := run(&wunderv1.RunRequest{UserId: "busy", Question: "q"}); err != nil {
				t.Fatal(err)
			}
			<-started
			check("second run of a user", run(&wunderv1.RunRequest{UserId: "busy", Question: "q"}), connect.CodeResourceExhausted, "BUSY")
			// The global limit (2, no queue): the next user's run is refused
			// with a retry hint.
			if err := run(&wunderv1.RunRequest{UserId: "other", Question: "q"}); err != nil {
				t.Fatal(err)
			}
			err = run(&wunderv1.RunRequest{UserId: "third", Question: "q"})
			check("full", err, connect.CodeUnavailable, "UNAVAILABLE")
			if d, ok := retryDelay(err); !ok || d != 7*time.Second {
				t.Errorf("RetryInfo = %v %v, want 7s", d, ok)
			}

			// A deadline on a stream that waits for a blocked run.
			runs, err := c.runs.ListRuns(ctx, connect.NewRequest(&wunderv1.ListRunsRequest{UserId: "busy"}))
			if err != nil || len(runs.Msg.GetRuns()) != 1 {
				t.Fatalf("ListRuns: %v %v", runs, err)
			}
			dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			f, err = c.runs.Follow(dctx, connect.NewRequest(&wunderv1.FollowRequest{RunId: runs.Msg.GetRuns()[0].GetRunId()}))
			if err == nil {
				for f.Receive() {
				}
				err = f.Err()
			}
			check("deadline", err, connect.CodeDeadlineExceeded, "")
		})
	}
}

func retryDelay(err error) (time.Duration, bool) {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return 0, false
	}
	for _, d := range ce.Details() {
		if v, err := d.Value(); err == nil {
			if ri, ok := v.(*errdetails.RetryInfo); ok {
				return ri.GetRetryDelay().AsDuration(), true
			}
		}
	}
	return 0, false
}

// No model configured is UNAVAILABLE; a credential acting for another
// user is PERMISSION_DENIED.
func TestUnavailableAndPermissionDenied(t *testing.T) {
	e := newEnv(t, envOpts{noModel: true, api: connectapi.Options{Scope: func(_ context.Context, requested string) (string, error) {
		if requested != "" && requested != "alice" {
			return "", fmt.Errorf("%w: this credential acts for alice", orchestrator.ErrPermissionDenied)
		}
		return "alice", nil
	}}})
	for _, p := range protocols {
		c := e.clients(p)
		_, err := c.runs.Submit(t.Context(), connect.NewRequest(&wunderv1.SubmitRequest{UserId: "alice", Question: "q"}))
		if connect.CodeOf(err) != connect.CodeUnavailable {
			t.Errorf("%s: no model: %v", p.name, err)
		}
		_, err = c.tools.ListTools(t.Context(), connect.NewRequest(&wunderv1.ListToolsRequest{UserId: "mallory"}))
		if connect.CodeOf(err) != connect.CodePermissionDenied || errorInfoReason(err) != "PERMISSION_DENIED" {
			t.Errorf("%s: other user: %v", p.name, err)
		}
		// The pinned user is filled in when the request names none.
		res, err := c.tools.ListTools(t.Context(), connect.NewRequest(&wunderv1.ListToolsRequest{}))
		if err != nil || len(res.Msg.GetTools()) == 0 {
			t.Errorf("%s: pinned user: %v %v", p.name, res, err)
		}
	}
}

// With an API key configured, each protocol's client gets UNAUTHENTICATED
// in its own error shape (not problem JSON), for unary and streaming calls,
// with no key and with a wrong one; the right key passes.
func TestAuth(t *testing.T) {
	e := newEnv(t, envOpts{gw: gateway.Options{APIKey: "s3cret"}, turns: []ot.Turn{{Content: "ok"}}})
	for _, p := range protocols {
		for _, key := range []string{"", "wrong", "s3cret"} {
			t.Run(p.name+"/key="+key, func(t *testing.T) {
				var opts []connect.ClientOption
				if key != "" {
					opts = append(opts, headerInterceptor("Authorization", "Bearer "+key))
				}
				c := e.clients(p, opts...)
				_, uerr := c.tools.ListTools(t.Context(), connect.NewRequest(&wunderv1.ListToolsRequest{UserId: "u"}))
				s, serr := c.runs.Run(t.Context(), connect.NewRequest(&wunderv1.RunRequest{UserId: "u-" + p.name + key, Question: "q"}))
				if serr == nil {
					for s.Receive() {
					}
					serr = s.Err()
				}
				want := connect.CodeUnauthenticated
				if key == "s3cret" {
					if uerr != nil || serr != nil {
						t.Fatalf("with the key: %v / %v", uerr, serr)
					}
					return
				}
				for _, err := range []error{uerr, serr} {
					if connect.CodeOf(err) != want {
						t.Errorf("got %v, want %v", err, want)
					}
					var ce *connect.Error
					if errors.As(err, &ce) && !strings.Contains(ce.Message(), "API key") && !strings.Contains(ce.Message(), "credentials") {
						t.Errorf("message %q does not say what is wrong", ce.Message())
					}
				}
			})
		}
	}
}

// The wire shapes of the refusal, byte-level: gRPC and gRPC-Web get a
// trailers-only response with grpc-status 16, Connect unary a 401 with a
// Connect error JSON, Connect streaming an end-of-stream message; /wunder
// keeps its problem JSON.
func TestAuthWireShapes(t *testing.T) {
	e := newEnv(t, envOpts{gw: gateway.Options{APIKey: "s3cret"}})
	path := e.srv.URL + "/wunder.v1.ToolService/ListTools"
	for _, tc := range []struct {
		name, ct, url string
		hdr           []string
		status        int
		check         func(t *testing.T, resp *http.Response, body string)
	}{
		{"grpc", "application/grpc", path, nil, 200, func(t *testing.T, resp *http.Response, _ string) {
			if resp.Header.Get("Grpc-Status")+resp.Trailer.Get("Grpc-Status") != "16" {
				t.Errorf("grpc-status %q / %q", resp.Header.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Status"))
			}
		}},
		{"grpc-web", "application/grpc-web+proto", path, nil, 200, func(t *testing.T, resp *http.Response, body string) {
			if resp.Header.Get("Grpc-Status") != "16" && !strings.Contains(body, "grpc-status: 16") {
				t.Errorf("grpc-web: headers %v, body %q", resp.Header, body)
			}
		}},
		{"connect unary", "application/proto", path, []string{"Connect-Protocol-Version", "1"}, 401, func(t *testing.T, resp *http.Response, body string) {
			if resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(body, `"code":"unauthenticated"`) {
				t.Errorf("connect unary: %s %s", resp.Header.Get("Content-Type"), body)
			}
		}},
		{"connect stream", "application/connect+proto", e.srv.URL + "/wunder.v1.RunService/Run", nil, 200, func(t *testing.T, resp *http.Response, body string) {
			if resp.Header.Get("Content-Type") != "application/connect+proto" || !strings.Contains(body, `"code":"unauthenticated"`) || body[0] != 2 {
				t.Errorf("connect stream: %s %q", resp.Header.Get("Content-Type"), body)
			}
		}},
		{"plain http", "application/json", e.srv.URL + "/wunder", nil, 401, func(t *testing.T, resp *http.Response, body string) {
			if resp.Header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("/wunder: %s %s", resp.Header.Get("Content-Type"), body)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, tc.url, strings.NewReader(""))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", tc.ct)
			headers(tc.hdr).set(req.Header)
			resp, err := e.httpClient(tc.ct == "application/grpc").Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			tc.check(t, resp, string(body))
		})
	}
}
