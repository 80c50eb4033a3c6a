// Command mcpconformanceclient is the client side of the official MCP
// conformance suite, built on wunder's MCP client (adapters/mcptools):
//
//	npx @modelcontextprotocol/conformance client --suite core --command "mcpconformanceclient"
//
// The suite runs it with the server URL as the only argument and the
// scenario in MCP_CONFORMANCE_SCENARIO. It exercises what wunder does as a
// client: connect, list tools (a refresh) and call them as server@tool,
// configured as with `mcp.elicitation: defaults` (elicitation requests are
// accepted with their schema's defaults).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/orchestrator"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mcpconformanceclient <server-url> (scenario in MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Getenv("MCP_CONFORMANCE_SCENARIO")); err != nil {
		fmt.Fprintln(os.Stderr, "mcpconformanceclient:", err)
		os.Exit(1)
	}
}

func run(url, scenario string) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := mcptools.ServerConfig{Name: "srv", Transport: mcptools.TransportStreamableHTTP, URL: url}
	if strings.HasPrefix(scenario, "auth/") {
		h, err := oauthHandler(os.Getenv("MCP_CONFORMANCE_CONTEXT"))
		if err != nil {
			return err
		}
		srv.OAuth = h
	}
	set, err := mcptools.New([]mcptools.ServerConfig{srv},
		&mcptools.Options{Timeout: 20 * time.Second, ClientName: "wunder-conformance-client", Logger: log,
			Elicitation: mcptools.ElicitDefaults})
	if err != nil {
		return err
	}
	defer set.Close()
	ctx := context.Background()
	specs, err := set.Refresh(ctx, "srv")
	if err != nil {
		return err
	}
	switch scenario {
	case "initialize":
		return nil
	case "tools_call":
		return call(ctx, set, "srv@add_numbers", `{"a":5,"b":3}`)
	default:
		// Call every tool that takes no required arguments: what a run
		// would do with the server.
		for _, s := range specs {
			var schema struct {
				Required []string `json:"required"`
			}
			_ = json.Unmarshal(s.InputSchema, &schema)
			if len(schema.Required) == 0 {
				if err := call(ctx, set, s.Name, `{}`); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

func call(ctx context.Context, set *mcptools.Set, name, args string) error {
	tools, err := set.Tools(ctx, "conformance")
	if err != nil {
		return err
	}
	for _, t := range tools {
		if t.Spec().Name != name {
			continue
		}
		res, err := t.Call(ctx, &orchestrator.ToolInvocation{Arguments: json.RawMessage(args), Output: func(string, string) {}})
		if err != nil {
			return err
		}
		if res.IsError && strings.Contains(res.Content, "unavailable") {
			return fmt.Errorf("%s: %s", name, res.Content)
		}
		return nil
	}
	return fmt.Errorf("no tool %s", name)
}
