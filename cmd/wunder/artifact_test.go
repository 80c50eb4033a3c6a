package main

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/config"
)

// A run's artifacts reach each front end its own way, on a real server
// whose model calls the artifact tool: the /wunder JSON answer lists them
// (a small file with its bytes); an a2a-go client gets a FilePart with
// the bytes and a DataPart, in the blocking answer and again from
// GetTask later; an MCP client gets the file embedded and the data as
// application/json.
func TestArtifactsOnEveryFrontEnd(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.A2A.Server.UserID = "agent"
		c.A2A.Server.ToolNames = []string{"artifact"}
	})
	const csv = "a,b\n1,2\n"
	for _, user := range []string{"alice", "agent", "wunder"} {
		mustStatus(t, s.rest(t, "POST", "/wunder/workspace/file", `{"user_id":"`+user+`","path":"report.csv","content":"a,b\n1,2\n","create_if_missing":true}`, nil), 200)
	}
	fileCall := `call artifact {"path":"report.csv","description":"the numbers"}`

	// /wunder, JSON.
	var answer struct {
		State     string `json:"state"`
		Artifacts []struct {
			ID, Kind, Name, Path string
			MediaType            string `json:"media_type"`
			Bytes                []byte `json:"bytes"`
		} `json:"artifacts"`
	}
	decodeInto(t, s.rest(t, "POST", "/wunder", `{"user_id":"alice","question":`+quoteJSON(fileCall)+`,"tool_names":["artifact"],"stream":false}`, nil), 200, &answer)
	if answer.State != "finished" || len(answer.Artifacts) != 1 || answer.Artifacts[0].Kind != "file" || string(answer.Artifacts[0].Bytes) != csv ||
		answer.Artifacts[0].Path != "report.csv" || !strings.HasPrefix(answer.Artifacts[0].MediaType, "text/csv") {
		t.Fatalf("/wunder answer: %+v", answer)
	}

	// A2A, with a2a-go's client.
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), s.url)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(t.Context(), card)
	if err != nil {
		t.Fatal(err)
	}
	checkA2A := func(what string, task *sdk.Task, wantFile bool) {
		t.Helper()
		var file, data bool
		for _, a := range task.Artifacts {
			for _, p := range a.Parts {
				if raw := p.Raw(); raw != nil && string(raw) == csv && a.Name == "report.csv" && a.Description == "the numbers" {
					file = true
				}
				if d := p.Data(); d != nil {
					b, _ := json.Marshal(d)
					data = data || string(b) == `{"rows":2}`
				}
			}
		}
		if (wantFile && !file) || (!wantFile && !data) {
			b, _ := json.Marshal(task.Artifacts)
			t.Fatalf("%s: artifacts %s; want the %s", what, b, map[bool]string{true: "file with its bytes", false: "data part"}[wantFile])
		}
	}
	for _, tc := range []struct {
		question string
		file     bool
	}{{fileCall, true}, {`call artifact {"data":{"rows":2},"name":"summary"}`, false}} {
		res, err := c.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart(tc.question))})
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*sdk.Task)
		if task.Status.State != sdk.TaskStateCompleted {
			t.Fatalf("task %s", task.Status.State)
		}
		checkA2A("blocking answer", task, tc.file)
		got, err := c.GetTask(t.Context(), &sdk.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		checkA2A("GetTask", got, tc.file)
	}

	// MCP, with the go-sdk client.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: s.url + "/wunder/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": fileCall, "tool_names": []string{"artifact"}}})
	if err != nil || res.IsError {
		t.Fatalf("wunder__run: %v %+v", err, res)
	}
	var embedded *mcp.EmbeddedResource
	for _, c := range res.Content {
		if e, ok := c.(*mcp.EmbeddedResource); ok {
			embedded = e
		}
	}
	if embedded == nil || string(embedded.Resource.Blob) != csv || !strings.Contains(embedded.Resource.URI, "/wunder/workspace/download?path=report.csv") {
		t.Fatalf("MCP result content: %+v", res.Content)
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
