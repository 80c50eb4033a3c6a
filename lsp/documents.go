package lsp

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"time"
)

// Sync makes the server's view of the file at abs equal to text: didOpen the
// first time, then didChange (full text) and didSave with the next version;
// nothing when the server has this text already.
// It returns a mark for [Worker.WaitDiagnostics].
func (w *Worker) Sync(ctx context.Context, abs string, text string) (DocMark, error) {
	uri := PathToURI(abs)
	w.syncMu.Lock() // held while sending, so versions reach the server in order
	defer w.syncMu.Unlock()
	sum := sha256.Sum256([]byte(text))
	w.mu.Lock()
	mark := DocMark{URI: uri, seq: w.seq}
	v, open := w.docs[uri]
	same := open && w.sums[uri] == sum
	w.mu.Unlock()
	if same {
		// The server has this text already: no new snapshot (which would
		// throw its caches away); any diagnostics of this version count.
		mark.Version, mark.seq = v, 0
		return mark, nil
	}
	if !open {
		mark.Version = 1
		if err := w.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": uri, "languageId": LanguageID(abs), "version": 1, "text": text,
		}}); err != nil {
			return mark, err
		}
		w.setVersion(uri, 1, sum)
		return mark, nil
	}
	mark.Version = v + 1
	if err := w.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": v + 1},
		"contentChanges": []map[string]string{{"text": text}},
	}); err != nil {
		return mark, err
	}
	w.setVersion(uri, v+1, sum)
	if err := w.Notify(ctx, "textDocument/didSave", map[string]any{
		"textDocument": map[string]string{"uri": uri},
	}); err != nil {
		return mark, err
	}
	return mark, nil
}

func (w *Worker) setVersion(uri string, v int, sum [32]byte) {
	w.mu.Lock()
	w.docs[uri], w.sums[uri] = v, sum
	w.mu.Unlock()
}

// DocMark names a document version sent by [Worker.Sync].
type DocMark struct {
	URI     string
	Version int
	seq     uint64 // diagnostics received before the sync
}

// OpenDocuments returns how many documents the worker has open.
func (w *Worker) OpenDocuments() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.docs)
}

// publish records a publishDiagnostics notification.
func (w *Worker) publish(p publishDiagnosticsParams) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	w.diags[p.URI] = diagEntry{seq: w.seq, version: p.Version, diags: p.Diagnostics}
	close(w.diagC)
	w.diagC = make(chan struct{})
}

// WaitDiagnostics waits, at most wait and while ctx lives, for the server to
// publish diagnostics of the document version m names (or of a later one; a
// server that sends no version counts with any publish after the sync), and
// returns them with fresh = true. When the wait ends first it returns the
// last diagnostics known for the document, with fresh = false.
func (w *Worker) WaitDiagnostics(ctx context.Context, m DocMark, wait time.Duration) (diags []Diagnostic, fresh bool) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		w.mu.Lock()
		e, ok := w.diags[m.URI]
		ch := w.diagC
		w.mu.Unlock()
		if ok && e.seq > m.seq && (e.version == nil || *e.version >= m.Version) {
			return slices.Clone(e.diags), true
		}
		select {
		case <-ch:
		case <-timer.C:
			return slices.Clone(e.diags), false
		case <-ctx.Done():
			return slices.Clone(e.diags), false
		case <-w.watched:
			return slices.Clone(e.diags), false
		}
	}
}

// Diagnostics returns the last diagnostics the server published for the
// document at abs, and whether it published any.
func (w *Worker) Diagnostics(abs string) ([]Diagnostic, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.diags[PathToURI(abs)]
	return slices.Clone(e.diags), ok
}

// shutdown stops the server in bounded steps, each given grace: the
// shutdown request and the exit notification, then closing its stdin, then
// SIGTERM to its process group, then SIGKILL to the group; whatever the
// server left in its group is killed once it has exited. It returns an
// error wrapping [proc.ErrUnresponsive] if the server outlives all of them.
func (w *Worker) shutdown(grace time.Duration) error {
	w.mu.Lock()
	polite := w.state == StateReady || w.state == StateStarting
	if w.state != StateStopped {
		w.state = StateStopping
	}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.state = StateStopped
		w.mu.Unlock()
	}()
	if polite {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		// jsonrpc2's writes ignore ctx: when the grace ends, closing the
		// connection unblocks a write to a server that stopped reading.
		stop := context.AfterFunc(ctx, func() { _ = w.conn.Close() })
		if w.Call(ctx, "shutdown", nil, nil) == nil {
			_ = w.Notify(ctx, "exit", nil)
		}
		stop()
		cancel()
	}
	_ = w.conn.Close() // closes the server's stdin
	if err := w.t.stop(grace); err != nil {
		return fmt.Errorf("lsp: %s: %w", w.srv.ID, err)
	}
	<-w.watched
	return nil
}

// RSS returns the resident memory of the server's process group in bytes;
// 0 for an in-process server or where /proc is missing.
func (w *Worker) RSS() int64 { return groupRSS(w.t.pid) }

// PID returns the server's process id; 0 for an in-process server.
func (w *Worker) PID() int { return w.t.pid }
