package lsptools_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wunder/wunder/lsp"
)

// BenchmarkGopls measures, in one run against one gopls v0.23.0 binary:
//   - direct: textDocument/definition round trips of a bare client of our
//     own straight on gopls's stdio (the baseline);
//   - worker: the same request through a warm pooled lsp.Worker;
//   - tool: the whole lsp tool call (resolve, read, sync, request, render);
//   - write_diagnostics: write_file until its diagnostics summary is back;
//
// and reports the RSS of the idle worker (rss_MiB). Compare the ns/op of
// worker and tool with direct for the overhead ratios.
func BenchmarkGopls(b *testing.B) {
	gopls := goplsPath(b)
	e := newEnv(b, gopls)
	if res := e.call(b, e.builtin, "write_file", map[string]any{"path": "m/go.mod", "content": goMod}); res.IsError {
		b.Fatal(res.Content)
	}
	if res := e.call(b, e.builtin, "write_file", map[string]any{"path": "m/main.go", "content": mainGo}); !strings.Contains(res.Content, "1 error") {
		b.Fatal(res.Content)
	}
	ws, _ := e.builtin.Workspace("alice")
	mainAbs, _ := ws.Resolve("m/main.go")
	root := filepath.Dir(mainAbs)
	line10 := strings.Split(mainGo, "\n")[9]
	col := len([]rune(line10[:strings.Index(line10, "greet")])) + 1
	pos := lsp.Position{Line: 9, Character: lsp.UTF16Column(line10, col)}
	params := lsp.TextDocumentPositionParams{TextDocument: lsp.TextDocumentIdentifier{URI: lsp.PathToURI(mainAbs)}, Position: pos}

	// Both gopls processes are started and warmed (100 requests each)
	// before anything is timed; the sub-benchmarks share them.
	c := startRaw(b, gopls, root)
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": params.TextDocument.URI, "languageId": "go", "version": 1, "text": mainGo}})
	w, release, err := e.pool.Acquire(context.Background(), lsp.Key{User: "alice", Root: root, Server: "gopls"})
	if err != nil {
		b.Fatal(err)
	}
	defer release()
	var locs []lsp.Location
	for range 100 {
		if got := c.call("textDocument/definition", params); !strings.Contains(string(got), `"line":4`) {
			b.Fatalf("direct definition = %s", got)
		}
		if err := w.Call(context.Background(), "textDocument/definition", params, &locs); err != nil || len(locs) != 1 {
			b.Fatal(locs, err)
		}
	}
	b.Logf("idle worker RSS %d MiB, bare gopls RSS %d MiB", w.RSS()>>20, c.rss()>>20)

	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			c.call("textDocument/definition", params)
		}
	})
	b.Run("worker", func(b *testing.B) {
		b.ReportMetric(float64(w.RSS())/(1<<20), "rss_MiB")
		for b.Loop() {
			if err := w.Call(context.Background(), "textDocument/definition", params, &locs); err != nil || len(locs) != 1 {
				b.Fatal(locs, err)
			}
		}
	})
	b.Run("tool", func(b *testing.B) {
		args := map[string]any{"operation": "definition", "path": "m/main.go", "line": 10, "character": col}
		for b.Loop() {
			if res := e.call(b, e.lsp, "lsp", args); res.IsError {
				b.Fatal(res.Content)
			}
		}
	})
	b.Run("write_diagnostics", func(b *testing.B) {
		i := 0
		for b.Loop() {
			content := mainGo
			want := "1 error"
			if i%2 == 1 {
				content = strings.Replace(mainGo, "undefinedThing", "s", 1)
				want = "no problems"
			}
			i++
			if res := e.call(b, e.builtin, "write_file", map[string]any{"path": "m/main.go", "content": content}); !strings.Contains(res.Content, want) {
				b.Fatalf("write %d: %s", i, res.Content)
			}
		}
	})
}

// rawClient is a bare LSP client on a server's stdio: the baseline.
type rawClient struct {
	tb  testing.TB
	pid int
	in  io.Writer
	out *bufio.Reader
	id  int
}

func startRaw(tb testing.TB, gopls, root string) *rawClient {
	tb.Helper()
	cmd := exec.Command(gopls)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	c := &rawClient{tb: tb, in: in, out: bufio.NewReader(out), pid: cmd.Process.Pid}
	uri := lsp.PathToURI(root)
	c.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": uri,
		"workspaceFolders": []map[string]string{{"uri": uri, "name": "m"}},
		"capabilities":     map[string]any{"workspace": map[string]any{"configuration": true}}})
	c.notify("initialized", struct{}{})
	return c
}

func (c *rawClient) write(v any) {
	data, _ := json.Marshal(v)
	if _, err := fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(data), data); err != nil {
		c.tb.Fatal(err)
	}
}

func (c *rawClient) notify(method string, params any) {
	c.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// call sends a request and reads until its response, answering the
// server's own requests on the way.
func (c *rawClient) call(method string, params any) json.RawMessage {
	c.id++
	c.write(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	for {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Items []any `json:"items"`
			} `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(c.read(), &m); err != nil {
			c.tb.Fatal(err)
		}
		switch {
		case m.Method != "" && len(m.ID) > 0:
			var result any
			if m.Method == "workspace/configuration" {
				result = make([]any, len(m.Params.Items))
			}
			c.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
		case m.Method == "" && string(m.ID) == strconv.Itoa(c.id):
			if len(m.Error) > 0 {
				c.tb.Fatalf("%s: %s", method, m.Error)
			}
			return m.Result
		}
	}
}

func (c *rawClient) read() []byte {
	n := -1
	for {
		line, err := c.out.ReadString('\n')
		if err != nil {
			c.tb.Fatal(err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			n, _ = strconv.Atoi(v)
		}
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(c.out, buf); err != nil {
		c.tb.Fatal(err)
	}
	return buf
}

// rss reads VmRSS of the bare gopls from /proc.
func (c *rawClient) rss() int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
