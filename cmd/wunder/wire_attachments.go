package main

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/wunder/wunder/a2a"
	"github.com/wunder/wunder/gen/wunder/v1/wunderv1connect"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/internal/sandbox"
)

// newConverter builds the one document converter of every front-end
// (attachments, the convert routes, knowledge uploads) from the
// attachments section: one converter, so attachments.max_concurrent
// bounds them all together. pdftotext runs in the bubblewrap sandbox when
// there is one that works (no network, its own /tmp, only the directory
// of the PDF visible), else as a plain child process.
func newConverter(cfg *config.Config, sb *sandbox.Sandbox, log *slog.Logger) *doc2md.Converter {
	ac := cfg.Attachments
	opts := &doc2md.Options{MaxBytes: ac.MaxBytes, MaxCount: ac.MaxCount, MaxTotalBytes: ac.MaxTotalBytes,
		MaxPDFPages: ac.MaxPDFPages, MaxChars: ac.MaxChars, Timeout: ac.Timeout(),
		MaxUnzipBytes: ac.MaxUnzipBytes, MaxUnzipRatio: ac.MaxUnzipRatio, MaxZipEntries: ac.MaxZipEntries,
		MaxXMLDepth: ac.MaxXMLDepth, MaxRows: ac.MaxRows, MaxColumns: ac.MaxColumns, MaxCells: ac.MaxCells,
		MaxOutputBytes: ac.MaxOutputBytes, MaxConcurrent: ac.MaxConcurrent}
	if sb != nil && sb.Check() == nil {
		opts.Runner = sandboxRunner{sb}
	} else {
		log.Info("pdftotext runs outside a sandbox (sandbox.mode is none or bubblewrap is missing)")
	}
	return doc2md.New(opts)
}

// sandboxRunner runs a converter in the sandbox with dir as its workspace.
type sandboxRunner struct{ sb *sandbox.Sandbox }

func (r sandboxRunner) Run(ctx context.Context, dir string, args []string, stdout, stderr io.Writer) error {
	p, err := r.sb.Start(sandbox.Command{Workspace: dir, Args: args, Stdout: stdout, Stderr: stderr,
		Env: []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp"}})
	if err != nil {
		return err
	}
	select {
	case <-p.Done():
		return p.Err()
	case <-ctx.Done():
		_ = p.Stop(time.Second)
		<-p.Done()
		return ctx.Err()
	}
}

// attachmentPaths are the exact paths of the front-ends mounted on the
// gateway whose requests carry attachments; they get
// attachments.max_request_bytes as their body limit.
var attachmentPaths = []string{
	"/a2a", "/a2a/", a2a.DefaultRESTPath + "/message:send", a2a.DefaultRESTPath + "/message:stream",
	a2a.GRPCServicePath + "SendMessage", a2a.GRPCServicePath + "SendStreamingMessage",
	"/wunder/mcp",
	wunderv1connect.RunServiceRunProcedure, wunderv1connect.RunServiceSubmitProcedure,
}
