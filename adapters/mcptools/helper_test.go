package mcptools_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain doubles as the MCP servers of the fault tests: the test binary,
// started with WUNDER_MCPTOOLS_HELPER set, serves over stdio.
func TestMain(m *testing.M) {
	switch os.Getenv("WUNDER_MCPTOOLS_HELPER") {
	case "go":
		serveGo()
		os.Exit(0)
	case "raw":
		serveRaw()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type echoArgs struct {
	Text string `json:"text"`
}

// newFaultServer is a go-sdk server with well-behaved and faulty tools.
func newFaultServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "faults", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Never answers."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits the process mid-call."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Reports the pid; with spawn, starts a grandchild."},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct {
			Spawn bool `json:"spawn,omitempty"`
		}) (*mcp.CallToolResult, any, error) {
			out := map[string]int{"pid": os.Getpid()}
			if in.Spawn {
				c := exec.Command("sleep", "300")
				if err := c.Start(); err != nil {
					return nil, nil, err
				}
				out["child"] = c.Process.Pid
			}
			b, _ := json.Marshal(out)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Reports the server's environment, a KEY=VALUE per line."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(os.Environ(), "\n")}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports progress and logs, then answers."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			for i := 1; i <= 3; i++ {
				if tok := req.Params.GetProgressToken(); tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: "step"})
				}
			}
			//lint:ignore SA1019 a fake upstream that still logs (SEP-2577 deprecation): the client must tolerate it
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "working"})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
		})
	return s
}

func serveGo() {
	_ = newFaultServer().Run(context.Background(), &mcp.StdioTransport{})
}

// serveRaw speaks just enough JSON-RPC by hand to answer tools/call with a
// malformed result.
func serveRaw() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		var result string
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case "tools/list":
			result = `{"tools":[{"name":"bad","description":"Answers garbage.","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			result = `{"content":"not a list","isError":7}`
		default:
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`+"\n", req.ID)
			continue
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result)
	}

}
