// Command wunder is the agent gateway: `wunder serve` runs the server,
// `wunder run` asks a running server a question and shows the run as it
// happens, `wunder bench` measures a running server under load, and
// `wunder migrate`, `wunder config validate` and `wunder version` help
// operate it.
//
// This package is the composition root: the only importer of storage, the
// adapters and internal/config. It reads the configuration, builds every
// component with explicit constructors and wires them together (wire.go).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/wunder/wunder/internal/proc"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Exit codes.
const (
	exitOK        = 0
	exitFailure   = 1 // the command failed (or the run failed)
	exitUsage     = 2 // bad flags or arguments
	exitCancelled = 3 // the run was cancelled
	exitConfig    = 4 // the configuration is invalid
	exitWaiting   = 5 // the run waits for an approval nobody here could give
	exitInterrupt = 130
)

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error { return &exitError{code: code, err: err} }

func main() {
	// No descriptor wunder inherited may reach a child (a sandboxed
	// command above all).
	proc.CloseInheritedOnExec()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(execute(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// execute runs the CLI and returns its exit code.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return executeIn(ctx, args, os.Stdin, stdout, stderr)
}

// executeIn is execute with stdin given (`wunder run` reads approval
// answers from it).
func executeIn(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, "wunder:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "wunder:", err)
	return exitUsage // cobra's own errors are about flags and arguments
}

type rootFlags struct {
	configPath string
}

func newRootCmd() *cobra.Command {
	var rf rootFlags
	root := &cobra.Command{
		Use:           "wunder",
		Short:         "wunder is an agent gateway: it runs agent tasks and speaks A2A, MCP and HTTP",
		Long:          "wunder runs agent tasks (an LLM loop that calls tools) and serves them over HTTP+SSE.\n\nStart a server with `wunder serve`; ask it something with `wunder run \"question\"`.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&rf.configPath, "config", "", "configuration file (default: $WUNDER_CONFIG_PATH, else ./config/wunder.yaml if present)")
	root.AddCommand(newServeCmd(&rf), newMigrateCmd(&rf), newConfigCmd(&rf), newRunCmd(), newBenchCmd(&rf), newFakeLLMCmd(), newVersionCmd())
	root.AddCommand(newMCPCmd(&rf))                    // mcp_cmd.go
	root.AddCommand(newHealthCmd())                    // health.go
	root.AddCommand(newUserCmd(&rf), newTokenCmd(&rf)) // users_cmd.go
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), "wunder", version)
			return nil
		},
	}
}
