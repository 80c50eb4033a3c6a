package a2a_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// sdkClient resolves wunder's card with the a2a-go v2.4.0 resolver and
// builds its 1.0 JSON-RPC client from it.
func sdkClient(t *testing.T, e *env) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), e.url)
	if err != nil {
		t.Fatalf("resolve card: %v", err)
	}
	c, err := a2aclient.NewFromCard(t.Context(), card)
	if err != nil {
		t.Fatalf("client from card: %v", err)
	}
	return c
}

// sdkClientREST is the a2a-go client over the card's HTTP+JSON interface
// (the REST binding, rest.go), preferred to JSON-RPC.
func sdkClientREST(t *testing.T, e *env) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), e.url)
	if err != nil {
		t.Fatalf("resolve card: %v", err)
	}
	paths := &pathRecorder{}
	c, err := a2aclient.NewFromCard(t.Context(), card,
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []sdk.TransportProtocol{sdk.TransportProtocolHTTPJSON}}),
		a2aclient.WithRESTTransport(&http.Client{Transport: paths}))
	if err != nil {
		t.Fatalf("client from card: %v", err)
	}
	t.Cleanup(func() {
		for _, p := range paths.seen() {
			if !strings.HasPrefix(p, "/a2a/v1/") {
				t.Errorf("the HTTP+JSON client called %s, outside the REST binding", p)
			}
		}
		if len(paths.seen()) == 0 {
			t.Error("the HTTP+JSON client made no request through the REST binding")
		}
	})
	return c
}

// pathRecorder is an http.RoundTripper that notes the paths it carries.
type pathRecorder struct {
	mu    sync.Mutex
	paths []string
}

func (p *pathRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	p.mu.Lock()
	p.paths = append(p.paths, r.URL.Path)
	p.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (p *pathRecorder) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.paths)
}

// sdkClientGRPC is the a2a-go client over the card's GRPC interface
// (grpc.go), preferred to the others.
func sdkClientGRPC(t *testing.T, e *env) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), e.url)
	if err != nil {
		t.Fatalf("resolve card: %v", err)
	}
	c, err := a2aclient.NewFromCard(t.Context(), card,
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []sdk.TransportProtocol{sdk.TransportProtocolGRPC}}),
		a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatalf("client from card: %v", err)
	}
	return c
}

// sdkClients are the a2a-go clients the shared interop tests run with:
// 1.0 from the default resolver (JSON-RPC), 1.0 over HTTP+JSON and gRPC,
// and 0.3 through a2acompat/a2av0. The 1.0 ones come first.
var sdkClients = []struct {
	name string
	new  func(*testing.T, *env) *a2aclient.Client
}{{"1.0", sdkClient}, {"1.0 HTTP+JSON", sdkClientREST}, {"1.0 gRPC", sdkClientGRPC}, {"0.3", sdkClient03}}

func userMsg(text string) *sdk.SendMessageRequest {
	return &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart(text))}
}

func taskText(t *sdk.Task) string {
	var b strings.Builder
	for _, a := range t.Artifacts {
		for _, p := range a.Parts {
			b.WriteString(p.Text())
		}
	}
	return b.String()
}

func TestGoSDKSendGetList(t *testing.T) {
	for _, sc := range sdkClients[:3] { // ListTasks is 1.0 only
		t.Run(sc.name, func(t *testing.T) { sendGetList(t, sc.new(t, newEnv(t, nil))) })
	}
}

func sendGetList(t *testing.T, c *a2aclient.Client) {
	res, err := c.SendMessage(t.Context(), userMsg("hello"))
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task, ok := res.(*sdk.Task)
	if !ok {
		t.Fatalf("SendMessage result is %T, want *a2a.Task", res)
	}
	if task.Status.State != sdk.TaskStateCompleted || taskText(task) != "echo: hello" {
		t.Fatalf("task = %s %q, want completed \"echo: hello\"", task.Status.State, taskText(task))
	}
	one := 1
	got, err := c.GetTask(t.Context(), &sdk.GetTaskRequest{ID: task.ID, HistoryLength: &one})
	if err != nil {
		t.Fatalf("GetTask: %v", err)
	}
	if got.ContextID != task.ContextID || len(got.History) != 1 || got.History[0].Role != sdk.MessageRoleAgent {
		t.Fatalf("GetTask historyLength=1: context %s history %+v", got.ContextID, got.History)
	}
	// A second task in the same context, then list by context.
	req := userMsg("again")
	req.Message.ContextID = task.ContextID
	if _, err := c.SendMessage(t.Context(), req); err != nil {
		t.Fatalf("SendMessage in context: %v", err)
	}
	list, err := c.ListTasks(t.Context(), &sdk.ListTasksRequest{ContextID: task.ContextID, PageSize: 1})
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	if len(list.Tasks) != 1 || list.NextPageToken == "" {
		t.Fatalf("ListTasks page 1: %d tasks, next %q", len(list.Tasks), list.NextPageToken)
	}
	list2, err := c.ListTasks(t.Context(), &sdk.ListTasksRequest{ContextID: task.ContextID, PageSize: 1, PageToken: list.NextPageToken})
	if err != nil || len(list2.Tasks) != 1 || list2.Tasks[0].ID == list.Tasks[0].ID {
		t.Fatalf("ListTasks page 2: %+v, %v", list2, err)
	}
}

// TestGoSDKStream: SendStreamingMessage / message/stream starts with the
// task and ends with the completed status, the answer as an artifact.
func TestGoSDKStream(t *testing.T) {
	for _, sc := range sdkClients {
		t.Run(sc.name, func(t *testing.T) {
			c := sc.new(t, newEnv(t, nil))
			var kinds []string
			var final *sdk.TaskStatusUpdateEvent
			var answer string
			for ev, err := range c.SendStreamingMessage(t.Context(), userMsg("stream me")) {
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				switch v := ev.(type) {
				case *sdk.Task:
					kinds = append(kinds, "task")
				case *sdk.TaskStatusUpdateEvent:
					kinds = append(kinds, "status:"+string(v.Status.State))
					final = v
				case *sdk.TaskArtifactUpdateEvent:
					kinds = append(kinds, "artifact")
					answer = v.Artifact.Parts[0].Text()
				default:
					t.Fatalf("unexpected event %T", ev)
				}
			}
			if len(kinds) == 0 || kinds[0] != "task" {
				t.Fatalf("stream must start with the task: %v", kinds)
			}
			if final == nil || final.Status.State != sdk.TaskStateCompleted || answer != "echo: stream me" {
				t.Fatalf("stream %v ended with %v, answer %q", kinds, final, answer)
			}
		})
	}
}

// TestGoSDKCancelAndResubscribe: a dropped stream is resumed by
// SubscribeToTask / tasks/resubscribe from the task as it is; a terminal
// task cannot be subscribed to or cancelled; a held task is cancelled.
func TestGoSDKCancelAndResubscribe(t *testing.T) {
	for _, sc := range sdkClients {
		t.Run(sc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			c := sc.new(t, e)
			// Start a task that holds, drop the stream after the first event.
			var taskID sdk.TaskID
			for ev, err := range c.SendStreamingMessage(t.Context(), userMsg("hold on")) {
				if err != nil {
					t.Fatal(err)
				}
				taskID = ev.(*sdk.Task).ID
				break
			}
			<-e.model.Held()
			// Resubscribe: the task as it is, then everything to the end.
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var states []sdk.TaskState
			var answer string
			first := true
			for ev, err := range c.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: taskID}) {
				if err != nil {
					t.Fatalf("resubscribe: %v", err)
				}
				if first {
					if _, ok := ev.(*sdk.Task); !ok {
						t.Fatalf("resubscribe must start with the task, got %T", ev)
					}
					first = false
					e.model.Release()
					continue
				}
				switch v := ev.(type) {
				case *sdk.TaskStatusUpdateEvent:
					states = append(states, v.Status.State)
				case *sdk.TaskArtifactUpdateEvent:
					answer = v.Artifact.Parts[0].Text()
				}
			}
			if len(states) == 0 || states[len(states)-1] != sdk.TaskStateCompleted || answer != "echo: hold on" {
				t.Fatalf("after resubscribe: states %v answer %q", states, answer)
			}
			got, err := c.GetTask(t.Context(), &sdk.GetTaskRequest{ID: taskID})
			if err != nil || got.Status.State != sdk.TaskStateCompleted || taskText(got) != "echo: hold on" {
				t.Fatalf("GetTask after resubscribe: %+v, %v", got, err)
			}
			// Subscribing to a terminal task is an immediate error.
			for _, err := range c.SubscribeToTask(t.Context(), &sdk.SubscribeToTaskRequest{ID: taskID}) {
				if !errors.Is(err, sdk.ErrUnsupportedOperation) {
					t.Fatalf("subscribe to a terminal task: %v, want ErrUnsupportedOperation", err)
				}
				break
			}
			// Cancel: a held task is canceled; a terminal one is not cancelable.
			req := userMsg("hold again")
			req.Config = &sdk.SendMessageConfig{ReturnImmediately: true}
			res, err := c.SendMessage(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			held := res.(*sdk.Task)
			canceled, err := c.CancelTask(t.Context(), &sdk.CancelTaskRequest{ID: held.ID})
			if err != nil || canceled.Status.State != sdk.TaskStateCanceled {
				t.Fatalf("CancelTask: %v, %v", canceled, err)
			}
			if _, err := c.CancelTask(t.Context(), &sdk.CancelTaskRequest{ID: held.ID}); !errors.Is(err, sdk.ErrTaskNotCancelable) {
				t.Fatalf("cancel a canceled task: %v, want ErrTaskNotCancelable", err)
			}
		})
	}
}

// TestGoSDKErrors: wunder's error codes reach each client as a2a-go's
// sentinels.
func TestGoSDKErrors(t *testing.T) {
	for _, sc := range sdkClients {
		t.Run(sc.name, func(t *testing.T) {
			c := sc.new(t, newEnv(t, nil))
			if _, err := c.GetTask(t.Context(), &sdk.GetTaskRequest{ID: "run_nope"}); !errors.Is(err, sdk.ErrTaskNotFound) {
				t.Fatalf("GetTask unknown: %v, want ErrTaskNotFound", err)
			}
			if _, err := c.CancelTask(t.Context(), &sdk.CancelTaskRequest{ID: "run_nope"}); !errors.Is(err, sdk.ErrTaskNotFound) {
				t.Fatalf("CancelTask unknown: %v, want ErrTaskNotFound", err)
			}
			for _, err := range c.SubscribeToTask(t.Context(), &sdk.SubscribeToTaskRequest{ID: "run_nope"}) {
				if !errors.Is(err, sdk.ErrTaskNotFound) {
					t.Fatalf("SubscribeToTask unknown: %v, want ErrTaskNotFound", err)
				}
				break
			}
			if _, err := c.GetTaskPushConfig(t.Context(), &sdk.GetTaskPushConfigRequest{TaskID: "run_nope", ID: "x"}); !errors.Is(err, sdk.ErrPushNotificationNotSupported) {
				t.Fatalf("push without support: %v, want ErrPushNotificationNotSupported", err)
			}
			card, err := c.GetExtendedAgentCard(t.Context(), &sdk.GetExtendedAgentCardRequest{})
			if err != nil || card.Name != "wunder" {
				t.Fatalf("GetExtendedAgentCard: %v, %v", card, err)
			}
		})
	}
}
