package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"
	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2aext"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/internal/a2ui"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/sse"
)

// uiMessages is what the model sends with the a2ui tool in these tests: a
// surface with a question and a button.
const uiMessages = `[{"version":"v0.9","createSurface":{"surfaceId":"ship","catalogId":"` + a2ui.BasicCatalogID + `"}},` +
	`{"version":"v0.9","updateComponents":{"surfaceId":"ship","components":[` +
	`{"id":"root","component":"Column","children":["q","go"]},{"id":"q","component":"Text","text":"Ship it?"},` +
	`{"id":"go","component":"Button","child":"go_label","action":{"event":{"name":"ship","context":{"env":"prod"}}}},` +
	`{"id":"go_label","component":"Text","text":"Ship"}]}}]`

// uiText is uiMessages' text fallback.
const uiText = "[surface ship]\n  Ship it?\n  [Ship]"

// uiCall is the question that makes the fake model call the a2ui tool.
const uiCall = `call a2ui {"messages":` + uiMessages + `}`

// headerLog records the responses' A2A-Extensions headers of an HTTP client.
type headerLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *headerLog) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && strings.HasSuffix(r.URL.Path, "/a2a") {
		l.mu.Lock()
		l.seen = append(l.seen, resp.Header.Get("A2A-Extensions"))
		l.mu.Unlock()
	}
	return resp, err
}

func (l *headerLog) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.seen) == 0 {
		return "(no call)"
	}
	return l.seen[len(l.seen)-1]
}

// A2UI over A2A with a2a-go's client, on a real server whose model calls
// the a2ui tool. The card declares the extension. A client that activates
// it (a2aext's activator) gets the surface as one DataPart of the
// messages, marked application/json+a2ui, in the blocking answer, in
// GetTask and in a stream, and the responses name the extension; a client
// that does not gets the text fallback and no such header. A DataPart of
// the user's action (application/a2ui+json) reaches the model as text, an
// invalid message of it as a line saying why; data that is no list of
// messages is refused with the reason.
func TestA2UIOverA2A(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.A2A.Server.UserID = "agent"
		c.A2A.Server.ToolNames = []string{"a2ui"}
	})
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), s.url)
	if err != nil {
		t.Fatal(err)
	}
	if len(card.Capabilities.Extensions) != 1 || card.Capabilities.Extensions[0].URI != a2ui.ExtensionURI {
		t.Fatalf("the card declares %+v", card.Capabilities.Extensions)
	}
	client := func(activate bool) (*a2aclient.Client, *headerLog) {
		log := &headerLog{}
		opts := []a2aclient.FactoryOption{a2aclient.WithJSONRPCTransport(&http.Client{Transport: log})}
		if activate {
			opts = append(opts, a2aclient.WithCallInterceptors(a2aext.NewActivator(a2ui.ExtensionURI)))
		}
		c, err := a2aclient.NewFromCard(t.Context(), card, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return c, log
	}
	uiArtifact := func(what string, arts []*sdk.Artifact) *sdk.Artifact {
		t.Helper()
		for _, a := range arts {
			if strings.HasPrefix(string(a.ID), "a2ui_") {
				return a
			}
		}
		b, _ := json.Marshal(arts)
		t.Fatalf("%s: no A2UI artifact in %s", what, b)
		return nil
	}
	checkParts := func(what string, a *sdk.Artifact) {
		t.Helper()
		if len(a.Parts) != 1 || len(a.Extensions) != 1 || a.Extensions[0] != a2ui.ExtensionURI {
			t.Fatalf("%s: artifact %+v", what, a)
		}
		p := a.Parts[0]
		msgs, ok := p.Data().([]any)
		if !ok || len(msgs) != 2 || p.Metadata["mimeType"] != a2ui.MIMEType || p.MediaType != a2ui.MIMEType {
			b, _ := json.Marshal(p)
			t.Fatalf("%s: part %s; want the 2 messages, marked %s", what, b, a2ui.MIMEType)
		}
		first, _ := msgs[0].(map[string]any)
		if first["version"] != "v0.9" || first["createSurface"] == nil {
			t.Fatalf("%s: first message %v", what, first)
		}
	}

	// Activated.
	ui, log := client(true)
	res, err := ui.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart(uiCall))})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*sdk.Task)
	if task.Status.State != sdk.TaskStateCompleted {
		t.Fatalf("task %s", task.Status.State)
	}
	checkParts("blocking answer", uiArtifact("blocking answer", task.Artifacts))
	if got := log.last(); got != a2ui.ExtensionURI {
		t.Fatalf("the response's A2A-Extensions header is %q; want the activated extension", got)
	}
	got, err := ui.GetTask(t.Context(), &sdk.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	checkParts("GetTask", uiArtifact("GetTask", got.Artifacts))
	var streamed []*sdk.Artifact
	for ev, err := range ui.SendStreamingMessage(t.Context(), &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart(uiCall))}) {
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := ev.(*sdk.TaskArtifactUpdateEvent); ok {
			streamed = append(streamed, u.Artifact)
		}
	}
	checkParts("stream", uiArtifact("stream", streamed))

	// Not activated: the text.
	plain, log := client(false)
	res, err = plain.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart(uiCall))})
	if err != nil {
		t.Fatal(err)
	}
	a := uiArtifact("fallback", res.(*sdk.Task).Artifacts)
	if len(a.Parts) != 1 || a.Parts[0].Text() != uiText || len(a.Extensions) != 0 {
		b, _ := json.Marshal(a)
		t.Fatalf("fallback artifact %s; want the text %q", b, uiText)
	}
	if got := log.last(); got != "" {
		t.Fatalf("a call that activated nothing gets A2A-Extensions %q", got)
	}

	// The user's action, in the other MIME spelling, reaches the model
	// (the fake model answers "echo: " and what it read).
	action := sdk.NewDataPart([]any{map[string]any{"version": "v0.9", "action": map[string]any{"name": "ship", "surfaceId": "ship",
		"sourceComponentId": "go", "timestamp": "2026-12-08T10:00:00Z", "context": map[string]any{"env": "prod"}}}})
	action.Metadata = map[string]any{"mimeType": a2ui.MIMETypeAlt}
	res, err = ui.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, action)})
	if err != nil {
		t.Fatal(err)
	}
	answer := res.(*sdk.Task).Status.Message
	want := `echo: [a2ui action] {"context":{"env":"prod"},"name":"ship","sourceComponentId":"go","surfaceId":"ship","timestamp":"2026-12-08T10:00:00Z"}`
	if answer == nil || len(answer.Parts) != 1 || answer.Parts[0].Text() != want {
		b, _ := json.Marshal(answer)
		t.Fatalf("the model read %s; want %s", b, want)
	}
	// A message of the list that is not valid reaches the model as a line
	// saying why (the list is no transaction); data that is no list of
	// messages at all is refused with the reason.
	half := sdk.NewDataPart([]any{map[string]any{"version": "v0.9", "action": map[string]any{"name": "ship"}}})
	half.MediaType = a2ui.MIMEType
	res, err = ui.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, half)})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.(*sdk.Task).Status.Message.Parts[0].Text(); got != "echo: "+a2ui.InvalidPrefix+"message 0: action.surfaceId is required" {
		t.Fatalf("the model read %q", got)
	}
	broken := sdk.NewDataPart("ship it")
	broken.Metadata = map[string]any{"mimeType": a2ui.MIMEType}
	if _, err := ui.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, broken)}); err == nil ||
		!strings.Contains(err.Error(), "A2UI data must be a list of messages") {
		t.Fatalf("a broken A2UI part: %v", err)
	}
}

// The other bindings: JSON-RPC 0.3 activated by X-A2A-Extensions gets a
// DataPart per message (0.3's DataPart holds an object) and the header
// back in that spelling; HTTP+JSON gets the one DataPart and the header;
// the gRPC binding gets the one DataPart and the header in its response
// metadata.
func TestA2UIOverA2AOtherBindings(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.A2A.Server.UserID = "agent"
		c.A2A.Server.ToolNames = []string{"a2ui"}
	})
	body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":` + quoteJSON(uiCall) + `}]}}}`
	r := restDo(t, "POST", s.url+"/a2a", body, map[string]string{"Content-Type": "application/json", "X-A2A-Extensions": a2ui.ExtensionURI})
	raw, _ := io.ReadAll(r.Body)
	var out struct {
		Result struct {
			Artifacts []struct {
				ArtifactID string `json:"artifactId"`
				Parts      []struct {
					Kind     string         `json:"kind"`
					Data     map[string]any `json:"data"`
					Metadata map[string]any `json:"metadata"`
				} `json:"parts"`
			} `json:"artifacts"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if r.Header.Get("X-A2A-Extensions") != a2ui.ExtensionURI || r.Header.Get("A2A-Extensions") != a2ui.ExtensionURI {
		t.Fatalf("0.3 response headers %v", r.Header)
	}
	var kinds []string
	for _, a := range out.Result.Artifacts {
		if !strings.HasPrefix(a.ArtifactID, "a2ui_") {
			continue
		}
		for _, p := range a.Parts {
			if p.Kind != "data" || p.Metadata["mimeType"] != a2ui.MIMEType || p.Data["version"] != "v0.9" {
				t.Fatalf("0.3 part %+v", p)
			}
			for k := range p.Data {
				if k != "version" {
					kinds = append(kinds, k)
				}
			}
		}
	}
	if strings.Join(kinds, ",") != "createSurface,updateComponents" {
		t.Fatalf("0.3 parts carry %v; want one message each: %s", kinds, raw)
	}

	// HTTP+JSON: the one DataPart and the header.
	rb := `{"message":{"messageId":"r1","role":"ROLE_USER","parts":[{"text":` + quoteJSON(uiCall) + `}]}}`
	r = restDo(t, "POST", s.url+"/a2a/v1/message:send", rb, map[string]string{"Content-Type": "application/json", "A2A-Version": "1.0", "A2A-Extensions": a2ui.ExtensionURI})
	raw, _ = io.ReadAll(r.Body)
	var rest struct {
		Task struct {
			Artifacts []struct {
				ArtifactID string   `json:"artifactId"`
				Extensions []string `json:"extensions"`
				Parts      []struct {
					Data      []any  `json:"data"`
					MediaType string `json:"mediaType"`
				} `json:"parts"`
			} `json:"artifacts"`
		} `json:"task"`
	}
	if err := json.Unmarshal(raw, &rest); err != nil || r.Header.Get("A2A-Extensions") != a2ui.ExtensionURI {
		t.Fatalf("HTTP+JSON: %v, header %q: %s", err, r.Header.Get("A2A-Extensions"), raw)
	}
	ok := false
	for _, a := range rest.Task.Artifacts {
		if strings.HasPrefix(a.ArtifactID, "a2ui_") {
			ok = len(a.Parts) == 1 && len(a.Parts[0].Data) == 2 && a.Parts[0].MediaType == a2ui.MIMEType && len(a.Extensions) == 1
		}
	}
	if !ok {
		t.Fatalf("HTTP+JSON artifacts: %s", raw)
	}

	hc := &http.Client{Transport: headerRT{h2c: true}}
	req := connect.NewRequest(&a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "g1", Role: a2apb.Role_ROLE_USER,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: uiCall}}}}})
	req.Header().Set("A2A-Extensions", a2ui.ExtensionURI)
	res, err := connect.NewClient[a2apb.SendMessageRequest, a2apb.SendMessageResponse](hc, s.url+"/lf.a2a.v1.A2AService/SendMessage", connect.WithGRPC()).CallUnary(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Header().Get("A2A-Extensions"); got != a2ui.ExtensionURI {
		t.Fatalf("gRPC response metadata a2a-extensions %q", got)
	}
	var found bool
	for _, a := range res.Msg.GetTask().GetArtifacts() {
		if !strings.HasPrefix(a.GetArtifactId(), "a2ui_") {
			continue
		}
		p := a.GetParts()[0]
		found = len(a.GetParts()) == 1 && p.GetMediaType() == a2ui.MIMEType && len(p.GetData().GetListValue().GetValues()) == 2 &&
			p.GetMetadata().GetFields()["mimeType"].GetStringValue() == a2ui.MIMEType
	}
	if !found {
		t.Fatalf("gRPC task artifacts %v", res.Msg.GetTask().GetArtifacts())
	}
}

// On /wunder the batch is an a2ui event of the stream (its messages, its
// surfaces, its text) and is listed in the final event and the JSON
// answer; on MCP, wunder__run's result embeds the messages as A2UI data.
func TestA2UIOnWunderAndMCP(t *testing.T) {
	s := startServer(t, nil)
	r := s.rest(t, "POST", "/wunder", `{"user_id":"ada","question":`+quoteJSON(uiCall)+`,"tool_names":["a2ui"]}`, nil)
	mustStatus(t, r, 200)
	var ui, final map[string]json.RawMessage
	for ev, err := range sse.Read(r.Body) {
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(ev.Data, &env)
		switch ev.Type {
		case "a2ui":
			_ = json.Unmarshal(env.Data, &ui)
		case "final":
			_ = json.Unmarshal(env.Data, &final)
		}
	}
	r.Body.Close()
	var text string
	var surfaces []string
	_ = json.Unmarshal(ui["text"], &text)
	_ = json.Unmarshal(ui["surfaces"], &surfaces)
	if text != uiText || len(surfaces) != 1 || surfaces[0] != "ship" || !strings.Contains(string(ui["messages"]), `"createSurface"`) {
		t.Fatalf("the a2ui event: %v", ui)
	}
	if !strings.Contains(string(final["a2ui"]), string(ui["id"])) {
		t.Fatalf("the final event lists %s", final["a2ui"])
	}
	var answer struct {
		A2UI []struct {
			ID       string          `json:"id"`
			Messages json.RawMessage `json:"messages"`
		} `json:"a2ui"`
	}
	decodeInto(t, s.rest(t, "POST", "/wunder", `{"user_id":"ada","question":`+quoteJSON(uiCall)+`,"tool_names":["a2ui"],"stream":false}`, nil), 200, &answer)
	if len(answer.A2UI) != 1 || !strings.HasPrefix(answer.A2UI[0].ID, "a2ui_") || !strings.Contains(string(answer.A2UI[0].Messages), `"surfaceId":"ship"`) {
		t.Fatalf("the JSON answer's a2ui: %+v", answer)
	}

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: s.url + "/wunder/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": uiCall, "tool_names": []string{"a2ui"}}})
	if err != nil || res.IsError {
		t.Fatalf("wunder__run: %v %+v", err, res)
	}
	var embedded *mcp.EmbeddedResource
	for _, c := range res.Content {
		if e, ok := c.(*mcp.EmbeddedResource); ok && e.Resource.MIMEType == a2ui.MIMEType {
			embedded = e
		}
	}
	if embedded == nil || !strings.HasPrefix(embedded.Resource.URI, "wunder://a2ui/a2ui_") || !strings.Contains(embedded.Resource.Text, `"createSurface"`) {
		t.Fatalf("MCP result content: %+v", res.Content)
	}
}

// The demo model's A2UI path on a real server with no model but the
// scripted one: a question about A2UI answers with the form (an a2ui
// batch), and its action, sent back in the same session, updates the
// form and reaches the model.
func TestDemoA2UI(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		m := config.NewModel()
		m.Provider, m.Model = config.ProviderScripted, "demo"
		c.LLM.Models = map[string]config.Model{"demo": m}
	})
	type answer struct {
		SessionID string `json:"session_id"`
		State     string `json:"state"`
		Answer    string `json:"answer"`
		A2UI      []struct {
			Surfaces []string        `json:"surfaces"`
			Messages json.RawMessage `json:"messages"`
		} `json:"a2ui"`
	}
	var form answer
	decodeInto(t, s.rest(t, "POST", "/wunder", `{"user_id":"newcomer","question":"show me the A2UI demo","tool_names":["a2ui"],"stream":false}`, nil), 200, &form)
	if form.State != "finished" || len(form.A2UI) != 1 || form.A2UI[0].Surfaces[0] != llm.A2UISurface || !strings.Contains(string(form.A2UI[0].Messages), llm.A2UIAction) {
		t.Fatalf("the demo's form: %+v", form)
	}
	action := a2ui.ActionPrefix + `{"context":{"name":"Ada"},"name":"` + llm.A2UIAction + `","sourceComponentId":"send","surfaceId":"` + llm.A2UISurface + `"}`
	var got answer
	decodeInto(t, s.rest(t, "POST", "/wunder", `{"user_id":"newcomer","session_id":"`+form.SessionID+`","question":`+quoteJSON(action)+`,"tool_names":["a2ui"],"stream":false}`, nil), 200, &got)
	if got.State != "finished" || !strings.Contains(got.Answer, action) || len(got.A2UI) != 1 || !strings.Contains(string(got.A2UI[0].Messages), `"updateDataModel"`) {
		t.Fatalf("the answer to the action: %+v", got)
	}
}
