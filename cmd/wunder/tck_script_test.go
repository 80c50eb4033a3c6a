package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wunder/wunder/internal/config"
)

// startTCKServer serves wunder as scripts/a2a-tck.sh does: the scripted
// model playing scripts/a2a-tck-model.yaml, A2A runs offered write_file,
// artifact, ask_user and reply. (The runner also sets server.public_url, which
// makes the links of file artifacts absolute; here they are relative.)
func startTCKServer(t *testing.T) *server {
	t.Helper()
	return startServer(t, func(c *config.Config) {
		m := config.NewModel()
		m.Provider, m.Model = config.ProviderScripted, "tck"
		m.Script = filepath.Join("..", "..", "scripts", "a2a-tck-model.yaml")
		c.LLM.Models, c.LLM.Default = map[string]config.Model{"tck": m}, "tck"
		c.A2A.Server.ToolNames = []string{"write_file", "artifact", "ask_user", "reply"}
	})
}

// tckMessage is a message as the TCK sends it: its scenario in its id.
func tckMessage(id, text string) *sdk.Message {
	m := sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart(text))
	m.ID = id
	return m
}

// The TCK's artifact scenarios (test_artifacts.py) through the scripted
// model's TCK script, which calls wunder's real tools, on each 1.0
// binding with a2a-go: the first artifact of the task is a file with its
// bytes, a file by URL (which downloads it), a data part, or the answer's
// text, as the TCK checks them; a streamed task announces the same.
func TestTCKScriptArtifacts(t *testing.T) {
	s := startTCKServer(t)
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), s.url)
	if err != nil {
		t.Fatal(err)
	}
	bindings := map[string][]a2aclient.FactoryOption{
		"JSON-RPC": nil,
		"HTTP+JSON": {a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []sdk.TransportProtocol{sdk.TransportProtocolHTTPJSON}}),
			a2aclient.WithRESTTransport(http.DefaultClient)},
		"gRPC": {a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []sdk.TransportProtocol{sdk.TransportProtocolGRPC}}),
			a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials()))},
	}
	for binding, opts := range bindings {
		t.Run(binding, func(t *testing.T) {
			c, err := a2aclient.NewFromCard(t.Context(), card, opts...)
			if err != nil {
				t.Fatal(err)
			}
			first := func(scenario string) *sdk.Part {
				t.Helper()
				res, err := c.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: tckMessage("tck-"+scenario+"-0f3c", "TCK artifact test")})
				if err != nil {
					t.Fatalf("%s: %v", scenario, err)
				}
				task, ok := res.(*sdk.Task)
				if !ok || task.Status.State != sdk.TaskStateCompleted || len(task.Artifacts) == 0 || task.Artifacts[0].ID == "" || len(task.Artifacts[0].Parts) == 0 {
					b, _ := json.Marshal(res)
					t.Fatalf("%s: %s; want a completed task whose first artifact has a part", scenario, b)
				}
				return task.Artifacts[0].Parts[0]
			}
			if p := first("artifact-file"); string(p.Raw()) != "tck" || p.Filename != "output.txt" || p.MediaType != "text/plain" {
				t.Errorf("file artifact: %+v", p)
			}
			p := first("artifact-file-url")
			if u := string(p.URL()); !strings.HasPrefix(u, "/wunder/workspace/download?") || p.Raw() != nil || p.Filename != "output.txt" || p.MediaType != "text/plain" {
				t.Errorf("file URL artifact: %+v", p)
			} else if got := fetchText(t, s.url+u); got != "tck" {
				t.Errorf("the file URL serves %q", got)
			}
			if p := first("artifact-data"); !sameJSON(p.Data(), `{"key":"value","count":42}`) {
				t.Errorf("data artifact: %+v", p.Data())
			}
			if p := first("artifact-text"); p.Text() != "Generated text content" {
				t.Errorf("text artifact: %+v", p)
			}
			// DM-MSG-001: the scenario's model answers with the reply
			// tool, and SendMessage answers with a Message, no task.
			res, err := c.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: tckMessage("tck-message-response-77ad", "TCK message test")})
			if err != nil {
				t.Fatal(err)
			}
			if m, ok := res.(*sdk.Message); !ok || m.Role != sdk.MessageRoleAgent || m.TaskID != "" || m.ContextID == "" ||
				len(m.Parts) != 1 || m.Parts[0].Text() != "Direct message response" {
				b, _ := json.Marshal(res)
				t.Errorf("message response: %s; want an agent Message with the text and its context, no task", b)
			}
		})
	}

	// Streamed: the data artifact is announced before the answer.
	c, err := a2aclient.NewFromCard(t.Context(), card)
	if err != nil {
		t.Fatal(err)
	}
	var announced []string
	for ev, err := range c.SendStreamingMessage(t.Context(), &sdk.SendMessageRequest{Message: tckMessage("tck-artifact-data-9a1b", "TCK artifact test")}) {
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := ev.(*sdk.TaskArtifactUpdateEvent); ok {
			b, _ := json.Marshal(u.Artifact.Parts)
			announced = append(announced, string(b))
		}
	}
	if len(announced) != 2 || !strings.Contains(announced[0], `"count":42`) || !strings.Contains(announced[1], "Attached the data.") {
		t.Fatalf("streamed artifacts %q; want the data, then the answer", announced)
	}
}

// The TCK's tasks that stay open, through the TCK script's ask_user: 1.0
// (_task_helpers.py) — a task input-required, two history messages that
// keep it so, and the follow-up that completes it; 0.3 (the mandatory
// suite) — a task continued by a follow-up, one that takes three
// follow-ups and limits its history, and one cancelled while open.
func TestTCKScriptOpenTasks(t *testing.T) {
	s := startTCKServer(t)
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), s.url)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(t.Context(), card)
	if err != nil {
		t.Fatal(err)
	}
	send := func(c *a2aclient.Client, m *sdk.Message, want sdk.TaskState) *sdk.Task {
		t.Helper()
		res, err := c.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: m})
		if err != nil {
			t.Fatalf("%s %q: %v", m.ID, m.Parts[0].Text(), err)
		}
		task := res.(*sdk.Task)
		if task.Status.State != want {
			t.Fatalf("%s %q: task %s, want %s", m.ID, m.Parts[0].Text(), task.Status.State, want)
		}
		return task
	}
	followUp := func(task *sdk.Task, id, text string) *sdk.Message {
		m := tckMessage(id, text)
		m.TaskID = task.ID
		return m
	}

	// 1.0: create_multiturn_task_with_history.
	task := send(c, tckMessage("tck-input-required-77aa", "TCK prerequisite task creation"), sdk.TaskStateInputRequired)
	for _, text := range []string{"TCK history message 1", "TCK history message 2"} {
		send(c, followUp(task, "tck-input-required-77ab", text), sdk.TaskStateInputRequired)
	}
	done := send(c, followUp(task, "tck-complete-task-77ac", "TCK complete after history"), sdk.TaskStateCompleted)
	if done.ID != task.ID || done.Status.Message == nil || done.Status.Message.Parts[0].Text() != "Hello from TCK" {
		t.Fatalf("completed: %+v", done.Status)
	}

	// 0.3, with a2a-go's 0.3 client.
	card03, err := (&agentcard.Resolver{CardParser: a2av0.NewAgentCardParser()}).Resolve(t.Context(), s.url)
	if err != nil {
		t.Fatal(err)
	}
	c03, err := a2aclient.NewFromCard(t.Context(), card03, a2aclient.WithDefaultsDisabled(), a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	// test_message_send_continue_task.
	task = send(c03, tckMessage("text-message-id-1", "Hello from TCK!"), sdk.TaskStateInputRequired)
	send(c03, followUp(task, "continuation-message-id-1", "Follow-up message for the existing task"), sdk.TaskStateCompleted)
	// test_task_history_length.
	task = send(c03, tckMessage("test-history-create-message-id-1", "Initial message for history test"), sdk.TaskStateInputRequired)
	for _, n := range []string{"1", "2", "3"} {
		send(c03, followUp(task, "test-history-message-"+n, "Follow-up message "+n+" for history test"), sdk.TaskStateInputRequired)
	}
	two := 2
	got, err := c03.GetTask(t.Context(), &sdk.GetTaskRequest{ID: task.ID, HistoryLength: &two})
	if err != nil || len(got.History) > 2 || got.Status.State != sdk.TaskStateInputRequired {
		t.Fatalf("tasks/get historyLength=2: %v %+v", err, got)
	}
	// test_tasks_cancel_valid.
	task = send(c03, tckMessage("cancel-test-message-id-1", "Task for cancel test"), sdk.TaskStateInputRequired)
	cancelled, err := c03.CancelTask(t.Context(), &sdk.CancelTaskRequest{ID: task.ID})
	if err != nil || cancelled.ID != task.ID || cancelled.Status.State != sdk.TaskStateCanceled {
		t.Fatalf("tasks/cancel: %v %+v", err, cancelled)
	}
}

func fetchText(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// sameJSON reports whether v encodes to the same JSON as want.
func sameJSON(v any, want string) bool {
	var a, b any
	got, _ := json.Marshal(v)
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
