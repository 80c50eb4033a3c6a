package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/config"
)

// appUpstream is a go-sdk MCP server with an MCP App: show_weather names
// ui://weather/view.html, refresh_weather is visible to the app alone, the
// view declares its CSP and permissions (in resources/list and on its
// contents), and beside it are a second view and a resource that is no
// app.
func appUpstream(t *testing.T) (url string) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "show_weather", Description: "shows the weather", InputSchema: obj,
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://weather/view.html"}, "vendor/x": "kept"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "refresh_weather", Description: "refreshes the view", InputSchema: obj,
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://weather/view.html", "visibility": []any{"app"}}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "refreshed"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "explain_weather", Description: "explains the weather to the model", InputSchema: obj,
		Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"model"}}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "it rains"}}}, nil
		})
	uiMeta := mcp.Meta{"ui": map[string]any{
		"csp":         map[string]any{"connectDomains": []any{"https://api.weather.example"}, "resourceDomains": []any{"https://cdn.weather.example"}},
		"permissions": map[string]any{"clipboardWrite": map[string]any{}},
		"domain":      "weather.example",
	}}
	for _, r := range []*mcp.Resource{
		{URI: "ui://weather/view.html", Name: "view", MIMEType: "text/html;profile=mcp-app", Meta: uiMeta},
		{URI: "ui://weather/secret.html", Name: "secret", MIMEType: "text/html;profile=mcp-app"},
		{URI: "file:///notes.txt", Name: "notes", MIMEType: "text/plain"},
	} {
		s.AddResource(r, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: r.MIMEType,
				Text: "<html><body>" + r.Name + "</body></html>", Meta: r.Meta}}}, nil
		})
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

func connectMCP(t *testing.T, endpoint string) *mcp.ClientSession {
	t.Helper()
	return connectMCPAt(t, endpoint, "")
}

// connectMCPAt connects a host asking for revision version ("": go-sdk's
// latest, 2026-07-28).
func connectMCPAt(t *testing.T, endpoint, version string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearerRT("k")}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s: %v", endpoint, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// asJSON is v as generic JSON, for comparing what two peers sent.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// Through /wunder/mcp/{server}, an MCP App passes as the upstream serves
// it: the tools' _meta.ui, the ui:// resources with their CSP and
// permissions, and the view's HTML are what a client reading the
// upstream directly gets.
func TestMCPAppsThroughPassThrough(t *testing.T) {
	up := appUpstream(t)
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "k"
		c.MCP.Servers = []config.MCPServer{{Name: "weather", Transport: config.MCPStreamableHTTP, URL: up, Enabled: true}}
	})
	// Both at the upstream's own revision (a stateful go-sdk server speaks
	// 2025-11-25): a 2026-07-28 client's answers carry that revision's
	// resultType, which a 2025-11-25 upstream does not write.
	direct, pass := connectMCPAt(t, up, "2025-11-25"), connectMCPAt(t, s.url+"/wunder/mcp/weather", "2025-11-25")
	for _, step := range []struct {
		name string
		get  func(cs *mcp.ClientSession) (any, error)
	}{
		{"tools/list", func(cs *mcp.ClientSession) (any, error) { r, err := cs.ListTools(t.Context(), nil); return r, err }},
		{"resources/list", func(cs *mcp.ClientSession) (any, error) { r, err := cs.ListResources(t.Context(), nil); return r, err }},
		{"resources/read", func(cs *mcp.ClientSession) (any, error) {
			return cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://weather/view.html"})
		}},
	} {
		want, err := step.get(direct)
		if err != nil {
			t.Fatalf("%s direct: %v", step.name, err)
		}
		got, err := step.get(pass)
		if err != nil {
			t.Fatalf("%s through the pass-through: %v", step.name, err)
		}
		if w, g := asJSON(t, want), asJSON(t, got); !reflect.DeepEqual(w, g) {
			t.Errorf("%s through the pass-through differs:\n got %v\nwant %v", step.name, g, w)
		}
	}
	// And the app's text is there, so the comparison above compared something.
	res, err := pass.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://weather/view.html"})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "<body>view</body>") ||
		res.Contents[0].Meta["ui"].(map[string]any)["domain"] != "weather.example" {
		t.Fatalf("view through the pass-through: %v %+v", err, res)
	}
}

// Through the aggregated /wunder/mcp, the catalog copy of an app's tool
// carries its _meta with the ui:// URI namespaced by the upstream;
// resources/list lists the namespaced views the policy lets the caller
// read (allow_resources leaves out secret.html; notes.txt is no app);
// resources/read fetches one from its upstream with its CSP and
// permissions; the app-only tool is listed and callable here, and never
// offered to a run.
func TestMCPAppsThroughCatalog(t *testing.T) {
	up := appUpstream(t)
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "k"
		c.MCP.Server.ExposeCatalog = true
		c.MCP.Servers = []config.MCPServer{{Name: "weather", Transport: config.MCPStreamableHTTP, URL: up, Enabled: true,
			AllowResources: []string{"ui://weather/view*"}}}
	})
	refreshMCP(t, s.url, "weather", "k")
	cs := connectMCP(t, s.url+"/wunder/mcp")

	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range list.Tools {
		byName[tool.Name] = tool
	}
	show, refresh := byName["weather__show_weather"], byName["weather__refresh_weather"]
	if show == nil || refresh == nil {
		t.Fatalf("catalog lacks the app's tools: %v", slices.Collect(func(yield func(string) bool) {
			for n := range byName {
				if !yield(n) {
					return
				}
			}
		}))
	}
	wantShow := map[string]any{"ui": map[string]any{"resourceUri": "ui://weather/weather/view.html"}, "vendor/x": "kept"}
	if got := asJSON(t, show.Meta); !reflect.DeepEqual(got, wantShow) {
		t.Errorf("show_weather _meta = %v, want %v", got, wantShow)
	}
	wantRefresh := map[string]any{"ui": map[string]any{"resourceUri": "ui://weather/weather/view.html", "visibility": []any{"app"}}}
	if got := asJSON(t, refresh.Meta); !reflect.DeepEqual(got, wantRefresh) {
		t.Errorf("refresh_weather _meta = %v, want %v", got, wantRefresh)
	}
	if _, ok := byName["wunder__run"]; !ok || byName["wunder__run"].Meta != nil {
		t.Errorf("wunder__run: want it listed, without _meta")
	}

	resources, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resources.Resources) != 1 || resources.Resources[0].URI != "ui://weather/weather/view.html" {
		t.Fatalf("resources/list = %v, want the namespaced view alone", asJSON(t, resources.Resources))
	}
	if got := asJSON(t, resources.Resources[0].Meta); !reflect.DeepEqual(got, map[string]any{"ui": map[string]any{
		"csp":         map[string]any{"connectDomains": []any{"https://api.weather.example"}, "resourceDomains": []any{"https://cdn.weather.example"}},
		"permissions": map[string]any{"clipboardWrite": map[string]any{}}, "domain": "weather.example"}}) {
		t.Errorf("the view's _meta in resources/list = %v", got)
	}

	read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://weather/weather/view.html"})
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Contents) != 1 {
		t.Fatalf("resources/read = %v", asJSON(t, read))
	}
	c := read.Contents[0]
	if c.URI != "ui://weather/weather/view.html" || c.MIMEType != "text/html;profile=mcp-app" || c.Text != "<html><body>view</body></html>" {
		t.Errorf("contents = %v", asJSON(t, c))
	}
	if csp := c.Meta["ui"].(map[string]any)["csp"].(map[string]any); !reflect.DeepEqual(csp["connectDomains"], []any{"https://api.weather.example"}) {
		t.Errorf("the contents' CSP = %v", csp)
	}

	// allow_resources: the policy point refuses the other view, which the
	// upstream would serve; names that are no upstream's are not found.
	for uri, code := range map[string]int64{
		"ui://weather/weather/secret.html":    -32001,
		"ui://nowhere/weather/view.html":      jsonrpc.CodeInvalidParams,
		"ui://weather/weather/view-gone.html": jsonrpc.CodeInvalidParams, // the upstream says so
		"file:///notes.txt":                   jsonrpc.CodeInvalidParams,
	} {
		_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != code {
			t.Errorf("resources/read %s: %v, want code %d", uri, err, code)
		}
	}

	// The app calls its own tool through /wunder/mcp.
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "weather__refresh_weather", Arguments: map[string]any{}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "refreshed" {
		t.Fatalf("the app-only tool through the catalog: %v %+v", err, res)
	}

	// Runs never offer it: not in the catalog a run selects from, and a
	// run that names it is refused, saying why.
	resp := s.rest(t, http.MethodGet, "/wunder/tools?user_id=u1", "", map[string]string{"X-API-Key": "k"})
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "weather@show_weather") || strings.Contains(string(body), "refresh_weather") {
		t.Errorf("GET /wunder/tools = %d %s: want show_weather and no refresh_weather", resp.StatusCode, body)
	}
	resp = s.rest(t, http.MethodPost, "/wunder", `{"user_id":"u1","question":"hi","stream":false,"tool_names":["weather@refresh_weather"]}`,
		map[string]string{"X-API-Key": "k", "Content-Type": "application/json"})
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "visible to MCP Apps only") {
		t.Errorf("a run naming the app-only tool = %d %s, want 400 saying why", resp.StatusCode, body)
	}
}

// The console's route: GET /wunder/mcp-apps/resource reads an app's page
// from its go-sdk upstream for the calling user, under the one rule of
// app reads (allow_resources, as resources/read on /wunder/mcp), and
// answers every refusal as a problem; GET /wunder/tools names the app of
// the tool that has one.
func TestMCPAppResourceRoute(t *testing.T) {
	up := appUpstream(t)
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "k"
		c.MCP.Servers = []config.MCPServer{{Name: "weather", Transport: config.MCPStreamableHTTP, URL: up, Enabled: true,
			AllowResources: []string{"ui://weather/view*"}}}
	})
	refreshMCP(t, s.url, "weather", "k")
	key := map[string]string{"X-API-Key": "k"}
	get := func(query string) (int, map[string]any, http.Header) {
		t.Helper()
		resp := s.rest(t, http.MethodGet, "/wunder/mcp-apps/resource?user_id=u1&"+query, "", key)
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatalf("%s: %d, not JSON: %v", query, resp.StatusCode, err)
		}
		return resp.StatusCode, body, resp.Header
	}

	code, body, hdr := get("uri=" + url.QueryEscape("ui://weather/weather/view.html"))
	if code != http.StatusOK || hdr.Get("Cache-Control") != "no-store" {
		t.Fatalf("the view: %d %v %v", code, body, hdr)
	}
	want := map[string]any{"contents": []any{map[string]any{
		"uri": "ui://weather/weather/view.html", "mimeType": "text/html;profile=mcp-app", "text": "<html><body>view</body></html>",
		"_meta": map[string]any{"ui": map[string]any{
			"csp":         map[string]any{"connectDomains": []any{"https://api.weather.example"}, "resourceDomains": []any{"https://cdn.weather.example"}},
			"permissions": map[string]any{"clipboardWrite": map[string]any{}}, "domain": "weather.example"}},
	}}}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("the view = %v\nwant %v", body, want)
	}

	for _, c := range []struct {
		query, code, detail string
		status              int
	}{
		{"uri=" + url.QueryEscape("ui://weather/weather/secret.html"), "permission_denied", "mcp.servers[weather].allow_resources", http.StatusForbidden},
		{"uri=" + url.QueryEscape("ui://nowhere/weather/view.html"), "not_found", `mcp server "nowhere"`, http.StatusNotFound},
		{"uri=" + url.QueryEscape("ui://weather/weather/view-gone.html"), "not_found", "view-gone.html", http.StatusNotFound}, // the upstream says so
		{"uri=" + url.QueryEscape("file:///notes.txt"), "invalid_argument", "ui://{server}/{path}", http.StatusBadRequest},
		{"uri=" + url.QueryEscape("ui://weather"), "invalid_argument", "ui://{server}/{path}", http.StatusBadRequest},
		{"", "missing_uri", "uri", http.StatusBadRequest},
	} {
		code, body, hdr := get(c.query)
		if code != c.status || body["code"] != c.code || !strings.Contains(fmt.Sprint(body["detail"]), c.detail) ||
			!strings.HasPrefix(hdr.Get("Content-Type"), "application/problem+json") {
			t.Errorf("%s: %d %v; want %d %s naming %q", c.query, code, body, c.status, c.code, c.detail)
		}
	}

	// The catalog names the app of show_weather, namespaced, and no app
	// on tools without one.
	resp := s.rest(t, http.MethodGet, "/wunder/tools?user_id=u1", "", key)
	var cat map[string][]struct{ Name, App string }
	if err := json.NewDecoder(resp.Body).Decode(&cat); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	apps := map[string]string{}
	for _, group := range cat {
		for _, e := range group {
			if e.App != "" {
				apps[e.Name] = e.App
			}
		}
	}
	if !reflect.DeepEqual(apps, map[string]string{"weather@show_weather": "ui://weather/weather/view.html"}) {
		t.Errorf("catalog apps = %v; want show_weather's alone", apps)
	}
}

// An MCP App's own tools/call from the console: POST /wunder/mcp-apps/call
// calls a tool of the app's server as the user, an app-only tool included,
// and refuses a tool kept for the model, a tool of another server, an app
// whose page the user may not read, and bad input, each as a problem.
func TestMCPAppToolCallRoute(t *testing.T) {
	up := appUpstream(t)
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "k"
		c.MCP.Servers = []config.MCPServer{{Name: "weather", Transport: config.MCPStreamableHTTP, URL: up, Enabled: true,
			AllowResources: []string{"ui://weather/view*"}}}
	})
	refreshMCP(t, s.url, "weather", "k")
	call := func(body string) (int, map[string]any) {
		t.Helper()
		resp := s.rest(t, http.MethodPost, "/wunder/mcp-apps/call", body, map[string]string{"X-API-Key": "k", "Content-Type": "application/json"})
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("%s: %d, not JSON: %v", body, resp.StatusCode, err)
		}
		return resp.StatusCode, out
	}
	view := `"uri":"ui://weather/weather/view.html"`
	for name, want := range map[string]string{"refresh_weather": "refreshed", "show_weather": "sunny"} {
		code, out := call(`{"user_id":"u1",` + view + `,"name":"` + name + `","arguments":{}}`)
		if text := fmt.Sprint(out["content"]); code != http.StatusOK || !strings.Contains(text, want) || out["isError"] == true {
			t.Errorf("the app calls %s: %d %v, want %q", name, code, out, want)
		}
	}
	for _, c := range []struct {
		body, code, detail string
		status             int
	}{
		{`{"user_id":"u1",` + view + `,"name":"explain_weather"}`, "permission_denied", "visibility", http.StatusForbidden},
		{`{"user_id":"u1",` + view + `,"name":"no_such_tool"}`, "tool_not_found", "weather@no_such_tool", http.StatusBadRequest},
		{`{"user_id":"u1",` + view + `,"name":"other@tool"}`, "invalid_argument", "its own server", http.StatusBadRequest},
		{`{"user_id":"u1","uri":"ui://weather/weather/secret.html","name":"show_weather"}`, "permission_denied", "allow_resources", http.StatusForbidden},
		{`{"user_id":"u1","uri":"file:///x","name":"show_weather"}`, "invalid_argument", "ui://{server}/{path}", http.StatusBadRequest},
		{`{"user_id":"u1",` + view + `}`, "invalid_argument", "name", http.StatusBadRequest},
		{`{"user_id":"u1",` + view + `,"name":"show_weather","arguments":[1]}`, "invalid_argument", "JSON object", http.StatusBadRequest},
	} {
		code, out := call(c.body)
		if code != c.status || out["code"] != c.code || !strings.Contains(fmt.Sprint(out["detail"]), c.detail) {
			t.Errorf("%s: %d %v; want %d %s naming %q", c.body, code, out, c.status, c.code, c.detail)
		}
	}
}
