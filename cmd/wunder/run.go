package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wunder/wunder/internal/client"
)

type runFlags struct {
	server, apiKey, user, session, model, mode, language string
	approve, approvalMode                                string
	tools                                                []string
	allTools, jsonOut                                    bool
	maxRounds                                            int
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   `run "question"`,
		Short: "Ask a running wunder server and follow the run in the terminal",
		Long: "Submit a task to a running server and stream its events: a spinner while the model works,\n" +
			"tool calls and their results, then the answer on stdout. Ctrl-C cancels the run.\n\n" +
			"When a tool call waits for approval (approvals.* in the server's configuration, or\n" +
			"--approval-mode), it shows the call and asks: approve? [y]es/[n]o (reject)/[e]dit/[c]ancel.\n" +
			"--approve=approve or reject answers every such call without asking; with the default\n" +
			"--approve=ask and no terminal on stdin, it lists what waits, with the route that decides\n" +
			"it, and exits 5, leaving the run waiting.\n\n" +
			"Exit codes: 0 answered, 1 failed, 2 bad usage, 3 cancelled, 5 waiting for approval, 130 interrupted.",
		Example: `  wunder run "What files are in my workspace?" --tools list_files
  wunder run --all-tools --user alice "Write hello.txt saying hi, then read it back"
  wunder run --json "2+2?" | jq .type
  wunder run --approval-mode suggest --tools write_file "Write hello.txt saying hi"
  wunder run --approve=reject --all-tools "Clean up my workspace"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch f.approve {
			case approveAsk, approveAlways, approveNever:
			default:
				return fmt.Errorf("--approve must be ask, approve or reject, got %q", f.approve)
			}
			return runQuestion(cmd.Context(), f, args[0], cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.server, "server", envOr("WUNDER_SERVER", "http://127.0.0.1:8000"), "server URL ($WUNDER_SERVER)")
	fl.StringVar(&f.apiKey, "api-key", os.Getenv("WUNDER_API_KEY"), "API key ($WUNDER_API_KEY)")
	fl.StringVar(&f.user, "user", envOr("USER", "cli"), "user_id to run as")
	fl.StringVar(&f.session, "session", "", "continue this session")
	fl.StringSliceVar(&f.tools, "tools", nil, "tools to offer (comma-separated names)")
	fl.BoolVar(&f.allTools, "all-tools", false, "offer every tool in the user's catalog")
	fl.StringVar(&f.model, "model", "", "model name (default: the server's default)")
	fl.StringVar(&f.mode, "mode", "", "tool call mode: tool_call or function_call")
	fl.StringVar(&f.language, "language", "", "prompt language: en or zh")
	fl.IntVar(&f.maxRounds, "max-rounds", 0, "maximum model rounds (0: the model's setting)")
	fl.BoolVar(&f.jsonOut, "json", false, "print every event as a JSON line instead of the readable view")
	fl.StringVar(&f.approve, "approve", approveAsk, "when a tool call waits for approval: ask (at the terminal), approve or reject")
	fl.StringVar(&f.approvalMode, "approval-mode", "", "which tool calls ask for approval: suggest, auto_edit or full_auto (default: the server's)")
	return cmd
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func runQuestion(ctx context.Context, f runFlags, question string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := client.New(f.server, f.apiKey, nil)
	c.SetLanguage(cliLanguage(os.Getenv)) // the server's messages; --language decides the prompt's
	tools := f.tools
	if f.allTools {
		catalog, err := c.Tools(ctx, f.user)
		if err != nil {
			return withCode(exitFailure, describe(err, f.server))
		}
		for _, t := range catalog {
			tools = append(tools, t.Name)
		}
	}
	run, err := c.Submit(ctx, client.RunRequest{
		UserID: f.user, Question: question, ToolNames: tools, SessionID: f.session,
		ModelName: f.model, ToolCallMode: f.mode, Language: f.language, MaxRounds: f.maxRounds,
		ApprovalMode: f.approvalMode,
	})
	if err != nil {
		return withCode(exitFailure, describe(err, f.server))
	}
	view := newRunView(stdout, stderr, f.jsonOut, isTerminal(os.Stderr))
	defer view.stop()
	view.started(run)
	opts := &client.FollowOptions{OnReconnect: func(err error, wait time.Duration) { view.reconnecting(err, wait) }}
	// Follow with a context of its own so Ctrl-C can cancel the run and
	// still read the final event.
	followCtx, stopFollow := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFollow()
	go func() {
		select {
		case <-ctx.Done():
			view.note("cancelling the run…")
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := c.Cancel(cctx, f.user, run.ID); err != nil {
				view.note("cancel failed: " + err.Error())
				stopFollow()
			}
		case <-followCtx.Done():
		}
	}()
	ap := &approver{c: c, user: f.user, runID: run.ID, mode: f.approve, view: view, in: stdin, interactive: isInteractive(stdin)}
	defer ap.close()
	var final *client.Final
	for ev, err := range c.Follow(followCtx, f.user, run.ID, 0, opts) {
		if err != nil {
			if ctx.Err() != nil {
				return withCode(exitInterrupt, errors.New("interrupted"))
			}
			return withCode(exitFailure, fmt.Errorf("following run %s: %w", run.ID, err))
		}
		if fin := view.event(ev); fin != nil {
			final = fin
		}
		if (ev.Type != "approval_required" && ev.Type != "user_input_required") || ctx.Err() != nil {
			continue
		}
		// The server keeps the stream open while the run waits: decide
		// (or answer), then read on.
		handle := ap.handle
		if ev.Type == "user_input_required" {
			handle = ap.question
		}
		if err := handle(ctx, ev); err != nil {
			if ctx.Err() != nil {
				continue // Ctrl-C at the question: the run is being cancelled
			}
			view.stop()
			var ee *exitError
			if errors.As(err, &ee) {
				return err
			}
			return withCode(exitFailure, fmt.Errorf("deciding on run %s: %w", run.ID, describe(err, f.server)))
		}
	}
	view.stop()
	switch {
	case final == nil:
		return withCode(exitFailure, errors.New("the run ended without a final event"))
	case final.State == "cancelled":
		return withCode(exitCancelled, errors.New("the run was cancelled"))
	case final.State == "failed":
		return withCode(exitFailure, fmt.Errorf("the run failed: %s", final.Error))
	}
	return nil
}

// describe makes connection errors actionable.
func describe(err error, server string) error {
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce
	}
	if strings.Contains(err.Error(), "connection refused") {
		return fmt.Errorf("no wunder server at %s (start one with `make run` or `wunder serve`): %w", server, err)
	}
	return err
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
