// Command connect is a small client of wunder's Connect API: it runs a task
// and prints the answer as it streams, then the run's usage.
//
//	go run ./examples/connect -url http://127.0.0.1:8000 -user alice "list the files in my workspace"
//	go run ./examples/connect -grpc -key "$WUNDER_API_KEY" -tools list_files "what is in my workspace?"
//
// -url is wunder's base URL; without it, $WUNDER_SERVER (as for the wunder
// CLI), else http://127.0.0.1:8000. -key defaults to $WUNDER_API_KEY.
//
// It uses the generated client (gen/wunder/v1/wunderv1connect) with the
// Connect protocol over HTTP/1.1, or gRPC over cleartext HTTP/2 with -grpc.
// See docs/connect.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"

	"connectrpc.com/connect"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/gen/wunder/v1/wunderv1connect"
)

func main() {
	url := flag.String("url", envOr("WUNDER_SERVER", "http://127.0.0.1:8000"), "wunder's base URL (default $WUNDER_SERVER, else http://127.0.0.1:8000)")
	key := flag.String("key", os.Getenv("WUNDER_API_KEY"), "API key (default $WUNDER_API_KEY)")
	user := flag.String("user", "example", "the user the run acts for")
	tools := flag.String("tools", "", "comma-separated tool names to offer")
	useGRPC := flag.Bool("grpc", false, "speak gRPC over h2c instead of the Connect protocol")
	flag.Parse()
	question := strings.Join(flag.Args(), " ")
	if question == "" {
		fmt.Fprintln(os.Stderr, "usage: connect [flags] question...")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *url, *key, *user, *tools, question, *useGRPC); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, key, user, tools, question string, useGRPC bool) error {
	hc := &http.Client{}
	var opts []connect.ClientOption
	if useGRPC {
		// gRPC needs HTTP/2; wunder serves it in cleartext (h2c).
		p := new(http.Protocols)
		p.SetUnencryptedHTTP2(true)
		hc.Transport = &http.Transport{Protocols: p}
		opts = append(opts, connect.WithGRPC())
	}
	client := wunderv1connect.NewRunServiceClient(hc, url, opts...)

	req := connect.NewRequest(&wunderv1.RunRequest{UserId: user, Question: question})
	if tools != "" {
		req.Msg.ToolNames = strings.Split(tools, ",")
	}
	if key != "" {
		req.Header().Set("Authorization", "Bearer "+key)
	}
	stream, err := client.Run(ctx, req)
	if err != nil {
		return err
	}
	defer stream.Close()
	for stream.Receive() {
		ev := stream.Msg().GetEvent()
		data := ev.GetData().AsMap()
		switch ev.GetType() {
		case "llm_output_delta":
			fmt.Print(data["delta"])
		case "tool_call":
			fmt.Printf("\n[tool %v %v]\n", data["name"], data["arguments"])
		case "final":
			fmt.Printf("\n\nrun %s (session %s): %v, stop reason %v, usage %v\n",
				ev.GetRunId(), ev.GetSessionId(), data["state"], data["stop_reason"], data["usage"])
		}
	}
	if err := stream.Err(); err != nil {
		var ce *connect.Error
		if errors.As(err, &ce) {
			return fmt.Errorf("%s: %s", ce.Code(), ce.Message())
		}
		return err
	}
	return nil
}

// envOr is the environment variable name, or def when it is unset or empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
