// Package lsp runs language servers for wunder: a pool of workers, one per
// (user, project root, server), each a subprocess speaking the Language
// Server Protocol on its stdio, framed by github.com/sourcegraph/jsonrpc2
// with a bounded codec of our own. It is a leaf: it imports no other wunder
// package (adapters/lsptools turns it into the lsp tool and the diagnostics
// summary of the write tools).
//
//	pool := lsp.NewPool(&lsp.Options{Servers: lsp.Resolve(nil, nil)})
//	defer pool.Close(ctx)
//	root, err := lsp.FindRoot(workspaceDir, file, srv.RootMarkers)
//	w, release, err := pool.Acquire(ctx, lsp.Key{User: "alice", Root: root, Server: "gopls"})
//	defer release()
//	mark, err := w.Sync(ctx, file, text)            // didOpen / didChange + didSave
//	diags, fresh := w.WaitDiagnostics(ctx, mark, time.Second)
//	err = w.Call(ctx, "textDocument/definition", params, &result)
//
// # Lifecycle
//
// [Pool.Acquire] starts the server of a key on first use (concurrent callers
// share one start, bounded by Options.Timeout), runs initialize/initialized
// with the client capabilities wunder uses, and counts references. The last
// release arms an idle timer (Options.IdleTTL); when it fires, or when the
// pool is full (Options.MaxWorkers) and the worker is the least recently
// used idle one, the worker stops in bounded steps, each given
// Options.ShutdownGrace: the shutdown request and the exit notification,
// closing stdin, SIGTERM to the server's process group, SIGKILL. A server
// that exits or breaks its stream is marked crashed (and killed); calls fail
// with [ErrCrashed] and the next Acquire starts a new one.
//
// A call that outlives its context or Options.Timeout sends
// $/cancelRequest. Server-to-client requests (workspace/configuration,
// client/registerCapability, ...) get minimal answers.
//
// # Trust
//
// Server output is read with bounds: header lines of at most 1 KiB, at most
// 16 headers, bodies of at most Options.MaxMessageBytes read whole before
// decoding; anything else breaks the worker, never the gateway. So does a
// server that stops reading its input: a write still blocked after
// Options.Timeout (or, while stopping, after ShutdownGrace) closes the
// connection, since jsonrpc2's writes do not honour ctx. Project
// roots come from [FindRoot], which resolves symlinks and never returns a
// directory outside the user's workspace.
//
// # Goroutines
//
// Each worker owns a jsonrpc2 read loop and a watcher (both end when the
// server's stream closes) and answers server requests in short-lived
// goroutines that end with their reply. The pool owns the goroutines that
// start and stop workers; [Pool.Close] waits for them.
package lsp
