package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"
)

// WorkerInfo describes one worker, for the admin API.
type WorkerInfo struct {
	User      string    `json:"user_id"`
	Root      string    `json:"root"`
	Server    string    `json:"server"`
	State     string    `json:"state"`
	PID       int       `json:"pid,omitempty"`
	RSSBytes  int64     `json:"rss_bytes"`
	Refs      int       `json:"refs"`
	OpenDocs  int       `json:"open_documents"`
	Restarts  int       `json:"restarts"`
	Started   time.Time `json:"started,omitzero"`
	LastUsed  time.Time `json:"last_used"`
	LastError string    `json:"last_error,omitempty"`
}

// Workers describes the pool's workers, most recently used first.
func (p *Pool) Workers() []WorkerInfo {
	p.mu.Lock()
	list := make([]WorkerInfo, 0, len(p.entries))
	workers := make([]*Worker, 0, len(p.entries))
	for _, e := range p.entries {
		info := WorkerInfo{User: e.key.User, Root: e.key.Root, Server: e.key.Server, State: StateStarting,
			Refs: e.refs, Restarts: e.restarts, LastUsed: e.lastUsed}
		if e.err != nil {
			info.State, info.LastError = StateCrashed, e.err.Error()
		}
		list = append(list, info)
		workers = append(workers, e.w)
	}
	p.mu.Unlock()
	for i, w := range workers {
		if w == nil {
			continue
		}
		w.mu.Lock()
		list[i].State = w.state
		if w.cause != nil {
			list[i].LastError = w.cause.Error()
		}
		list[i].OpenDocs = len(w.docs)
		w.mu.Unlock()
		list[i].PID, list[i].RSSBytes, list[i].Started = w.PID(), w.RSS(), w.started
	}
	slices.SortFunc(list, func(a, b WorkerInfo) int { return b.LastUsed.Compare(a.LastUsed) })
	return list
}

// ProbeResult is what [Pool.Probe] learned.
type ProbeResult struct {
	Server        string   `json:"server"`
	Command       []string `json:"command"`
	Name          string   `json:"name,omitempty"`
	Version       string   `json:"version,omitempty"`
	Capabilities  []string `json:"capabilities"`
	StartMillis   int64    `json:"start_ms"`
	RSSBytes      int64    `json:"rss_bytes"`
	ShutdownError string   `json:"shutdown_error,omitempty"`
}

// Probe starts server id on an empty scratch root outside the pool, runs the
// handshake, reports what the server answered, and stops it.
func (p *Pool) Probe(ctx context.Context, id string) (*ProbeResult, error) {
	srv, ok := p.Server(id)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownServer, id)
	}
	dir, err := os.MkdirTemp("", "wunder-lsp-probe-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	t0 := time.Now()
	w, err := startWorker(ctx, p.opts.start, Key{User: "probe", Root: dir, Server: id}, srv, &p.opts)
	if err != nil {
		return nil, err
	}
	res := &ProbeResult{Server: id, Command: srv.Command, StartMillis: time.Since(t0).Milliseconds(), RSSBytes: w.RSS()}
	res.Name, res.Version = w.ServerInfo()
	res.Capabilities = capabilityNames(w.Capabilities())
	if err := w.shutdown(p.opts.ShutdownGrace); err != nil {
		res.ShutdownError = err.Error()
	}
	return res, nil
}

// capabilityNames lists the provider capabilities a server announced
// (definitionProvider, ...), those set to anything but false or null.
func capabilityNames(raw json.RawMessage) []string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return []string{}
	}
	names := []string{}
	for k, v := range m {
		if s := string(v); s != "false" && s != "null" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return names
}
