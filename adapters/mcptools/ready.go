package mcptools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Readiness: a server's first discovery (the tools/list that [Set.Start]
// begins) settles it, whether it succeeded or failed. Until every server
// has settled, [Set.Ready] says not ready, so /readyz answers 503; after
// Options.ReadyTimeout the servers still being discovered are settled as
// failed (their discovery goes on, and its tools appear if it succeeds).
// A run that names server@tool of a server that has not settled waits for
// it in [Set.WaitTool], bounded by the server's timeout.

var _ orchestrator.ToolWaiter = (*Set)(nil)

// errDiscoveryTimeout settles the servers still being discovered when
// Options.ReadyTimeout ends.
var errDiscoveryTimeout = errors.New("first discovery did not finish within the ready timeout")

// settle records the end of sv's first discovery; later calls change
// nothing.
func (sv *server) settle(err error) {
	sv.settleOnce.Do(func() {
		sv.settleErr = err
		close(sv.settled)
	})
}

func (sv *server) isSettled() bool {
	select {
	case <-sv.settled:
		return true
	default:
		return false
	}
}

// readyTimeout settles every server still being discovered as failed.
func (s *Set) readyTimeout() {
	for _, sv := range s.snapshot() {
		if !sv.isSettled() {
			s.log.Warn("mcp server marked failed: still being discovered", "server", sv.cfg.Name, "ready_timeout", s.opts.ReadyTimeout)
			sv.settle(fmt.Errorf("%w (%s)", errDiscoveryTimeout, s.opts.ReadyTimeout))
		}
	}
}

// Ready reports whether the first discovery of every server has settled:
// nil when it has (or there are no servers), else an error wrapping
// [orchestrator.ErrUnavailable] that names the servers still being
// discovered. It never blocks. Before [Set.Start] no server has settled.
func (s *Set) Ready() error {
	var pending []string
	for _, sv := range s.snapshot() {
		if !sv.isSettled() {
			pending = append(pending, sv.cfg.Name)
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("%w: first discovery of mcp servers in progress: %s", orchestrator.ErrUnavailable, strings.Join(pending, ", "))
	}
	return nil
}

// WaitTool implements [orchestrator.ToolWaiter] for a canonical name
// server@tool that the Set does not offer: it waits until the server's
// first discovery has settled, bounded by ctx and the server's timeout,
// and reports why the server cannot offer tools (the depth guard, a failed
// discovery). A name of no configured server, or of a server that was
// never started, is not the Set's business.
func (s *Set) WaitTool(ctx context.Context, name string) (bool, error) {
	prefix, _, ok := strings.Cut(name, "@")
	sv, _ := s.lookup(prefix)
	if !ok || sv == nil || !sv.started.Load() {
		return false, nil
	}
	if !sv.isSettled() {
		t := time.NewTimer(sv.cfg.Timeout)
		defer t.Stop()
		select {
		case <-sv.settled:
		case <-t.C:
			return true, fmt.Errorf("mcp server %s: still being discovered after %s", sv.cfg.Name, sv.cfg.Timeout)
		case <-ctx.Done():
			return true, ctx.Err()
		}
	}
	if sv.refused != nil {
		return true, fmt.Errorf("mcp server %s: %w", sv.cfg.Name, sv.refused)
	}
	sv.mu.Lock()
	err, listed := sv.listErr, sv.list != nil
	sv.mu.Unlock()
	if err == nil && !listed && sv.settleErr != nil {
		err = sv.settleErr // given up by the ready timeout, still being listed
	}
	if err != nil {
		return true, fmt.Errorf("mcp server %s: %w", sv.cfg.Name, err)
	}
	return true, nil
}
