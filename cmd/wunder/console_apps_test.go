package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/config"
)

// appPage is an MCP App's page as the extension describes it, without an
// SDK: it asks ui/initialize, says initialized, shows the tool's input and
// result it is sent, reports its size, and calls two tools of its server,
// showing the host's answers: one for apps alone, one kept for the model.
const appPage = `<!doctype html><html><head><title>weather app</title></head><body>
<h1 id="title">Weather app</h1><p id="input">no input</p><p id="result">no result</p><p id="call">no call</p><p id="model">no model call</p><p id="host">no host</p>
<script>
let next = 1; const waiting = {};
function request(method, params) { const id = next++; parent.postMessage({jsonrpc: '2.0', id, method, params}, '*'); return new Promise((ok) => { waiting[id] = ok; }); }
addEventListener('message', (e) => {
  const m = e.data || {};
  if (m.id !== undefined && waiting[m.id]) { waiting[m.id](m); delete waiting[m.id]; return; }
  if (m.method === 'ui/notifications/tool-input') document.getElementById('input').textContent = 'input: ' + JSON.stringify(m.params.arguments);
  if (m.method === 'ui/notifications/tool-result') document.getElementById('result').textContent = 'result: ' + m.params.content[0].text;
});
request('ui/initialize', {protocolVersion: '2026-01-26', appInfo: {name: 'weather', version: '1'}, appCapabilities: {}}).then((r) => {
  document.getElementById('host').textContent = 'host: ' + r.result.hostInfo.name;
  parent.postMessage({jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {}}, '*');
  parent.postMessage({jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: {width: 300, height: 321}}, '*');
  return request('tools/call', {name: 'refresh_weather', arguments: {city: 'Lyon'}});
}).then((r) => {
  document.getElementById('call').textContent = 'call: ' + (r.error ? 'refused ' + r.error.code : r.result.content[0].text);
  return request('tools/call', {name: 'explain_weather', arguments: {}});
}).then((r) => { document.getElementById('model').textContent = 'model-only: ' + (r.error ? 'refused ' + r.error.code : 'relayed'); });
</script></body></html>`

// An MCP App next to its tool card: a go-sdk v1.8.0 server's tool names a
// ui:// page; the model calls the tool; the console shows the page in an
// iframe sandboxed with allow-scripts alone, and the page, running there,
// shows the input and result the console sent it, took its size, called
// an app-only tool of its server as the user (audited as a direct call), and
// was refused a tool kept for the model.
func TestConsoleMCPApp(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "show_weather", Description: "shows the weather", InputSchema: map[string]any{"type": "object"},
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://weather/view.html"}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in Paris"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "refresh_weather", Description: "refreshes the view", InputSchema: map[string]any{"type": "object"},
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://weather/view.html", "visibility": []any{"app"}}}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "refreshed " + string(req.Params.Arguments)}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "explain_weather", Description: "for the model", InputSchema: map[string]any{"type": "object"},
		Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"model"}}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "explained"}}}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "ui://weather/view.html", Name: "view", MIMEType: "text/html;profile=mcp-app"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/html;profile=mcp-app", Text: appPage}}}, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(up.Close)
	s := startServer(t, func(c *config.Config) {
		c.MCP.Servers = []config.MCPServer{{Name: "weather", Transport: config.MCPStreamableHTTP, URL: up.URL, Enabled: true}}
	})
	refreshMCP(t, s.url, "weather", "")
	b := openAnon(t, s, "gina")
	b.allow("status of 403 (Forbidden) " + s.url + "/wunder/mcp-apps/call") // the model-only tool, refused on purpose
	b.do("the app's tool in the picker", chromedp.WaitVisible(chromedp.Search(`//label[span[text()="weather@show_weather"]]`)))
	b.pickTool("weather@show_weather")
	b.ask(`call weather__show_weather {"city":"Paris"}`)
	b.until("the run to finish", lastRun+`?.dataset.state === 'finished'`)
	b.until("the app's frame next to the card", `!!document.querySelector('.tool-with-app details.tool[data-tool] + iframe.mcp-app')`)
	if got := b.eval(`document.querySelector('iframe.mcp-app').getAttribute('sandbox')`); got != "allow-scripts" {
		t.Errorf("the frame's sandbox = %q; want allow-scripts alone (never allow-same-origin)", got)
	}
	if got := b.eval(`document.querySelector('iframe.mcp-app').dataset.app`); got != "ui://weather/weather/view.html" {
		t.Errorf("the frame's app = %q", got)
	}
	b.until("the size the app asked for", `document.querySelector('iframe.mcp-app').style.height === '321px'`)
	// What the page shows, read inside the frame (its own document, in
	// its own target when chromium isolates sandboxed frames).
	want := map[string]string{"#title": "Weather app", "#input": `input: {"city":"Paris"}`, "#result": "result: sunny in Paris",
		"#call": `call: refreshed {"city":"Lyon"}`, "#model": "model-only: refused -32603", "#host": "host: wunder-console"}
	inFrame(t, b, func(ctx context.Context) {
		for sel, text := range want {
			js := `document.querySelector(` + jsString(sel) + `)?.textContent === ` + jsString(text)
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(0))); err != nil {
				got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
				t.Fatalf("in the app's frame, %s: want %q; the page shows %q (%v)", sel, text, got, err)
			}
		}
		if origin, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`String(self.origin)`)); origin != "null" {
			t.Errorf("the app's origin = %q; want an opaque origin (null)", origin)
		}
	})
	b.shot("mcp-app")
	b.clean()
}

// inFrame runs f with a context whose actions run in the app's frame: its
// own target when chromium put the sandboxed frame out of process.
func inFrame(t *testing.T, b *browser, f func(ctx context.Context)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		infos, err := chromedp.Targets(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range infos {
			if info.Type == "iframe" && strings.HasSuffix(info.URL, "/wunder/web/app-frame.html") {
				// Cancelling a target's context closes the target (and with
				// it the page): only at the test's end.
				ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithTargetID(info.TargetID))
				t.Cleanup(cancel)
				f(ctx)
				return
			}
		}
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`true`)); err != nil { // a round trip, not a sleep
			t.Fatal(err)
		}
	}
	t.Fatal("the app's frame is no target of its own; this test reads it there")
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(s) + "'"
}
