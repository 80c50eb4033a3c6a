package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wunder/wunder/internal/proc"
)

// fakeServer is an in-process language server for the protocol tests. It
// reads framed messages with the package's own reader and writes raw bytes,
// so a test can make it misbehave.
type fakeServer struct {
	r *bufio.Reader
	w io.Writer
	// hostile, when set, is written instead of the initialize result.
	hostile string
	// crashOn names a method on which the server exits without answering.
	crashOn string
	// ignoreShutdown makes the server ignore shutdown, exit and end of input.
	ignoreShutdown bool
	// onHover is called when a (never answered) hover request arrives.
	onHover func()
	// stallAfter names a method after which the server stops reading its
	// input until it is killed (pipe servers only).
	stallAfter string
	// killed is closed by SIGTERM or SIGKILL (pipe servers only).
	killed chan struct{}
	// done is closed when serve has returned (pipe servers only).
	done chan struct{}
	// hoverEnv makes hover answer at once with the server's environment.
	hoverEnv bool

	wmu sync.Mutex // serialises writes

	// mu guards the fields below.
	mu        sync.Mutex
	cancelled []string            // ids of $/cancelRequest
	blocked   map[string]chan int // hover requests waiting for a cancel
	methods   []string
}

type fakeMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (f *fakeServer) send(v any) {
	data, _ := json.Marshal(v)
	f.raw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(data), data))
}

func (f *fakeServer) raw(s string) {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	_, _ = io.WriteString(f.w, s)
}

func (f *fakeServer) reply(id json.RawMessage, result any) {
	f.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// serve runs until the input ends or exit arrives; it returns true on exit.
func (f *fakeServer) serve() bool {
	f.blocked = map[string]chan int{}
	for {
		body, err := readMessage(f.r, 0)
		if err != nil {
			return false
		}
		var m fakeMsg
		if json.Unmarshal(body, &m) != nil {
			continue
		}
		f.mu.Lock()
		f.methods = append(f.methods, m.Method)
		f.mu.Unlock()
		if f.crashOn != "" && m.Method == f.crashOn {
			return false
		}
		if f.stallAfter != "" && m.Method == f.stallAfter {
			<-f.killed
			return false
		}
		switch m.Method {
		case "initialize":
			if f.hostile != "" {
				f.raw(f.hostile)
				continue
			}
			f.reply(m.ID, map[string]any{
				"capabilities": map[string]any{"definitionProvider": true, "hoverProvider": true, "referencesProvider": false},
				"serverInfo":   map[string]any{"name": "fake", "version": "1"},
			})
			// A server-to-client request, as gopls sends them.
			f.send(map[string]any{"jsonrpc": "2.0", "id": "cfg1", "method": "workspace/configuration",
				"params": map[string]any{"items": []any{map[string]any{}}}})
		case "textDocument/didOpen", "textDocument/didChange":
			var p struct {
				TextDocument struct {
					URI     string `json:"uri"`
					Version int    `json:"version"`
					Text    string `json:"text"`
				} `json:"textDocument"`
				ContentChanges []struct {
					Text string `json:"text"`
				} `json:"contentChanges"`
			}
			_ = json.Unmarshal(m.Params, &p)
			text := p.TextDocument.Text
			if len(p.ContentChanges) > 0 {
				text = p.ContentChanges[0].Text
			}
			diags := []map[string]any{}
			for i, line := range strings.Split(text, "\n") {
				if j := strings.Index(line, "ERROR"); j >= 0 {
					pos := map[string]int{"line": i, "character": UTF16Column(line, len([]rune(line[:j])))}
					diags = append(diags, map[string]any{"range": map[string]any{"start": pos, "end": pos},
						"severity": 1, "message": "found ERROR", "source": "fake"})
				}
			}
			f.send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
				"params": map[string]any{"uri": p.TextDocument.URI, "version": p.TextDocument.Version, "diagnostics": diags}})
		case "textDocument/definition":
			var p TextDocumentPositionParams
			_ = json.Unmarshal(m.Params, &p)
			f.reply(m.ID, []Location{{URI: p.TextDocument.URI, Range: Range{Start: p.Position, End: p.Position}}})
		case "textDocument/hover": // slow: answers only when cancelled
			if f.hoverEnv {
				f.reply(m.ID, map[string]any{"contents": strings.Join(os.Environ(), "\n")})
				continue
			}
			ch := make(chan int, 1)
			f.mu.Lock()
			f.blocked[string(m.ID)] = ch
			f.mu.Unlock()
			if f.onHover != nil {
				f.onHover()
			}
			go func(id json.RawMessage) {
				<-ch
				f.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32800, "message": "cancelled"}})
			}(m.ID)
		case "$/cancelRequest":
			var p struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(m.Params, &p)
			f.mu.Lock()
			f.cancelled = append(f.cancelled, string(p.ID))
			if ch, ok := f.blocked[string(p.ID)]; ok {
				ch <- 1
				delete(f.blocked, string(p.ID))
			}
			f.mu.Unlock()
		case "shutdown":
			if !f.ignoreShutdown {
				f.reply(m.ID, nil)
			}
		case "exit":
			if !f.ignoreShutdown {
				return true
			}
		default:
			if len(m.ID) > 0 {
				f.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "no " + m.Method}})
			}
		}
	}
}

func (f *fakeServer) cancels() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cancelled...)
}

// pipeStart returns a startFunc running a fresh fake server per start over
// in-memory pipes, made by mk; it records the servers it started.
type pipeStarter struct {
	mk func() *fakeServer
	// mu guards servers.
	mu      sync.Mutex
	servers []*fakeServer
}

func (ps *pipeStarter) start(_ context.Context, _ ServerConfig, _ string) (*transport, error) {
	cr, sw := io.Pipe() // server -> client
	sr, cw := io.Pipe() // client -> server
	f := ps.mk()
	f.r, f.w = bufio.NewReader(sr), sw
	ps.mu.Lock()
	ps.servers = append(ps.servers, f)
	ps.mu.Unlock()
	done := make(chan struct{})
	f.done = done
	f.killed = make(chan struct{})
	killOnce := sync.OnceFunc(func() { close(f.killed) })
	go func() {
		f.serve()
		sw.Close()
		sr.Close()
		close(done)
	}()
	rwc := &pipeRWC{r: cr, w: cw}
	kill := func(sig syscall.Signal) error {
		if sig == syscall.SIGKILL || (sig == syscall.SIGTERM && !f.ignoreShutdown) {
			sr.CloseWithError(io.ErrClosedPipe) // the server's input ends
			sw.Close()
			killOnce()
		}
		return nil
	}
	// stop mirrors proc.Process.Stop's steps on the pipe server.
	stop := func(grace time.Duration) error {
		_ = rwc.Close()
		for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
			if sig != 0 {
				_ = kill(sig)
			}
			t := time.NewTimer(grace)
			select {
			case <-done:
				t.Stop()
				return nil
			case <-t.C:
			}
		}
		return proc.ErrUnresponsive
	}
	return &transport{rwc: rwc, done: done, exitErr: func() error { return nil }, signal: kill, stop: stop}, nil
}

func (ps *pipeStarter) last() *fakeServer {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.servers[len(ps.servers)-1]
}

func (ps *pipeStarter) count() int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return len(ps.servers)
}

type pipeRWC struct {
	r *io.PipeReader
	w *io.PipeWriter
}

func (p *pipeRWC) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeRWC) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeRWC) Close() error                { p.w.Close(); return nil }

// TestMain lets the test binary act as a language server subprocess
// (WUNDER_LSP_FAKE=normal|stubborn|env), for the process lifecycle tests.
// With WUNDER_LSP_CHILD_PIDFILE set, the server first starts a helper in its
// process group, as tsserver is, and writes the helper's pid there.
func TestMain(m *testing.M) {
	mode := os.Getenv("WUNDER_LSP_FAKE")
	if mode == "" {
		goleak.VerifyTestMain(m)
		return
	}
	if pidFile := os.Getenv("WUNDER_LSP_CHILD_PIDFILE"); pidFile != "" {
		child := exec.Command("sleep", "300")
		if err := child.Start(); err != nil {
			os.Exit(3)
		}
		_ = os.WriteFile(pidFile, []byte(strconv.Itoa(child.Process.Pid)), 0o600)
	}
	switch mode {
	case "stubborn": // ignores shutdown, exit, end of input and SIGTERM
		signal.Ignore(syscall.SIGTERM)
		f := &fakeServer{r: bufio.NewReader(os.Stdin), w: os.Stdout, ignoreShutdown: true}
		f.serve()
		// Block for good. Not select{}: with no other goroutine able to
		// run, Go's deadlock detector would end the process, and the
		// server would not be stubborn at all. A sleeping goroutine keeps
		// a timer pending, which the detector respects.
		for {
			time.Sleep(time.Hour)
		}
	case "env": // answers hover with its environment, a KEY=VALUE per line
		f := &fakeServer{r: bufio.NewReader(os.Stdin), w: os.Stdout, hoverEnv: true}
		f.serve()
		os.Exit(0)
	default:
		f := &fakeServer{r: bufio.NewReader(os.Stdin), w: os.Stdout}
		f.serve()
		os.Exit(0)
	}
}
