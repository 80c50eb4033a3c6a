package gateway

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wunder/wunder/monitor"
	"github.com/wunder/wunder/orchestrator"
)

// The monitor (the original wunder's /wunder/admin/monitor): runs with
// their current tool, tool usage over a window (the heatmap's data), one
// session's runs and events, cancel and delete, and a snapshot of the
// process. Admin only.
//
//	GET    /wunder/admin/monitor                      ?state=&user_id=&since=&limit=(50, at most 500)&cursor=
//	GET    /wunder/admin/monitor/tool_usage           ?since=&tool=&user_id=&group=hour|user
//	GET    /wunder/admin/monitor/system
//	GET    /wunder/admin/monitor/{session_id}         ?events=N
//	DELETE /wunder/admin/monitor/{session_id}
//	POST   /wunder/admin/monitor/{session_id}/cancel

// Monitor is what the monitor routes need besides Backend;
// *monitor.Monitor satisfies it.
type Monitor interface {
	Runs(ctx context.Context, f monitor.Filter) ([]monitor.RunView, error)
	ToolUsage(ctx context.Context, f monitor.ToolUsageFilter) ([]monitor.ToolUsage, error)
	Stats() orchestrator.Stats
}

var _ Monitor = (*monitor.Monitor)(nil)

func (s *Server) monitorRoutes() {
	mon := s.opts.Monitor
	if mon == nil {
		return
	}
	m := &monitorRoutes{s: s, mon: mon}
	s.mux.HandleFunc("GET /wunder/admin/monitor", m.runs)
	s.mux.HandleFunc("GET /wunder/admin/monitor/tool_usage", m.toolUsage)
	s.mux.HandleFunc("GET /wunder/admin/monitor/system", m.system)
	s.mux.HandleFunc("GET /wunder/admin/monitor/{session_id}", m.session)
	s.mux.HandleFunc("DELETE /wunder/admin/monitor/{session_id}", m.deleteSession)
	s.mux.HandleFunc("POST /wunder/admin/monitor/{session_id}/cancel", m.cancelSession)
}

type monitorRoutes struct {
	s   *Server
	mon Monitor
	// cpu is the last CPU sample, for the usage between two snapshots.
	mu      sync.Mutex
	lastCPU time.Duration
	lastAt  time.Time
}

// openStreams counts the SSE streams open in this process.
var openStreams atomic.Int64

// since reads ?since= as RFC 3339 or as a duration back from now ("1h").
func since(r *http.Request) (time.Time, error) {
	v := r.URL.Query().Get("since")
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return time.Now().Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: since must be an RFC 3339 time or a duration such as 1h, got %q", orchestrator.ErrInvalidArgument, v)
	}
	return t, nil
}

var runStates = orchestrator.States()

// stateNames lists the states a filter takes.
func stateNames() string {
	names := make([]string, len(runStates))
	for i, s := range runStates {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

func (m *monitorRoutes) runs(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	q := r.URL.Query()
	f := monitor.Filter{UserID: q.Get("user_id")}
	var err error
	if f.Since, err = since(r); err != nil {
		writeError(w, r, err)
		return
	}
	if v := q.Get("state"); v != "" {
		for st := range strings.SplitSeq(v, ",") {
			state := orchestrator.RunState(strings.TrimSpace(st))
			if !containsState(state) {
				writeError(w, r, fmt.Errorf("%w: state must be one of %s; got %q", orchestrator.ErrInvalidArgument, stateNames(), st))
				return
			}
			f.States = append(f.States, state)
		}
	}
	page, err := pageOf(r, "monitor", f.UserID, q.Get("state"), q.Get("since"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	f.Page = page.Page
	runs, err := m.mon.Runs(r.Context(), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	runs, next := orchestrator.CutPage(page, runs, func(v monitor.RunView) *orchestrator.PageKey { return orchestrator.RunKey(&v.Run) })
	writeJSON(w, r, http.StatusOK, map[string]any{"runs": runs, "next_cursor": next})
}

func containsState(s orchestrator.RunState) bool {
	for _, st := range runStates {
		if st == s {
			return true
		}
	}
	return false
}

func (m *monitorRoutes) toolUsage(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	q := r.URL.Query()
	f := monitor.ToolUsageFilter{Tool: q.Get("tool"), UserID: q.Get("user_id"), Group: q.Get("group")}
	var err error
	if f.Since, err = since(r); err != nil {
		writeError(w, r, err)
		return
	}
	tools, err := m.mon.ToolUsage(r.Context(), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"tools": nonNil(tools)})
}

// session is GET /wunder/admin/monitor/{session_id}: the session, its runs
// (newest first, with current tool) and the last ?events=N (default
// Options.MonitorEventLimit, at most 2000) events of its newest run.
func (m *monitorRoutes) session(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	ctx, id := r.Context(), r.PathValue("session_id")
	limit := m.s.opts.MonitorEventLimit
	if v := r.URL.Query().Get("events"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 2000 {
			writeError(w, r, fmt.Errorf("%w: events must be an integer between 0 and 2000, got %q", orchestrator.ErrInvalidArgument, v))
			return
		}
		limit = n
	}
	sess, err := m.s.b.GetSession(ctx, "", id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	runs, err := m.s.b.ListRuns(ctx, orchestrator.RunFilter{SessionID: id, Page: orchestrator.Page{Limit: 100}})
	if err != nil {
		writeError(w, r, err)
		return
	}
	views := make([]monitor.RunView, 0, len(runs))
	if len(runs) > 0 {
		all, err := m.mon.Runs(ctx, monitor.Filter{UserID: sess.UserID, Since: runs[len(runs)-1].CreatedAt, Page: orchestrator.Page{Limit: 1000}})
		if err != nil {
			writeError(w, r, err)
			return
		}
		for _, v := range all {
			if v.SessionID == id {
				views = append(views, v)
			}
		}
	}
	events := []orchestrator.Event{}
	if len(runs) > 0 && limit > 0 {
		last := runs[0]
		after := max(last.LastSeq-int64(limit), 0)
		// Up to the run's last stored seq: the monitor reads, it does not
		// follow.
		ectx, cancel := context.WithCancel(ctx)
		for ev, err := range m.s.b.Events(ectx, "", last.ID, after) {
			if err != nil || ev.Seq > last.LastSeq {
				break
			}
			events = append(events, ev)
			if ev.Seq >= last.LastSeq {
				break
			}
		}
		cancel()
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"session": sess, "runs": views, "events": events})
}

func (m *monitorRoutes) deleteSession(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	if err := m.s.b.DeleteSession(r.Context(), "", r.PathValue("session_id")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// cancelSession cancels every run of the session that has not ended and
// answers the runs it asked to stop.
func (m *monitorRoutes) cancelSession(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	ctx, id := r.Context(), r.PathValue("session_id")
	if _, err := m.s.b.GetSession(ctx, "", id); err != nil {
		writeError(w, r, err)
		return
	}
	active, err := m.s.b.ListRuns(ctx, orchestrator.RunFilter{SessionID: id, States: orchestrator.ActiveStates(), Page: orchestrator.Page{Limit: 100}})
	if err != nil {
		writeError(w, r, err)
		return
	}
	cancelled := []*orchestrator.Run{}
	for _, run := range active {
		got, err := m.s.b.Cancel(ctx, "", run.ID)
		if err != nil {
			continue // it ended meanwhile
		}
		cancelled = append(cancelled, got)
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"runs": cancelled})
}

// system is a snapshot of this process.
func (m *monitorRoutes) system(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	out := map[string]any{
		"goroutines":   runtime.NumGoroutine(),
		"cpus":         runtime.NumCPU(),
		"memory":       map[string]uint64{"heap_alloc_bytes": ms.HeapAlloc, "heap_sys_bytes": ms.HeapSys, "sys_bytes": ms.Sys, "gc_cycles": uint64(ms.NumGC)},
		"open_streams": openStreams.Load(),
		"runs":         m.mon.Stats(),
		"time":         time.Now().UTC(),
	}
	if cpu, ok := m.cpu(); ok {
		out["cpu"] = cpu
	}
	if ping := m.s.opts.Ready; ping != nil {
		start := time.Now()
		err := ping(r.Context())
		st := map[string]any{"latency_ms": float64(time.Since(start).Microseconds()) / 1000}
		if err != nil {
			st["error"] = err.Error()
		}
		out["store"] = st
	}
	if dir := m.s.opts.DataDir; dir != "" {
		out["data_dir"] = diskUse(dir)
	}
	writeJSON(w, r, http.StatusOK, out)
}

// cpu is the process's CPU time and its share of one core since the last
// snapshot (or since the process started, for the first).
func (m *monitorRoutes) cpu() (map[string]any, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return nil, false
	}
	used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	now := time.Now()
	m.mu.Lock()
	prevCPU, prevAt := m.lastCPU, m.lastAt
	m.lastCPU, m.lastAt = used, now
	m.mu.Unlock()
	out := map[string]any{"seconds": used.Seconds()}
	if !prevAt.IsZero() && now.After(prevAt) {
		out["percent_of_one_core"] = 100 * float64(used-prevCPU) / float64(now.Sub(prevAt))
	}
	return out, true
}

// maxDiskWalk bounds the entries a disk-use snapshot visits.
const maxDiskWalk = 200_000

// diskUse sums the data directory (up to maxDiskWalk entries; "partial"
// says it stopped there) and reports the file system's free space.
func diskUse(dir string) map[string]any {
	var bytes, files int64
	partial := false
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if files++; files > maxDiskWalk {
			partial = true
			return filepath.SkipAll
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				bytes += info.Size()
			}
		}
		return nil
	})
	out := map[string]any{"bytes": bytes, "entries": min(files, maxDiskWalk), "partial": partial}
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) == nil {
		out["fs_free_bytes"] = st.Bavail * uint64(st.Bsize)
		out["fs_total_bytes"] = st.Blocks * uint64(st.Bsize)
	}
	return out
}

// The users the monitor knows (through their sessions), one user's
// sessions, and deleting a user's data. Admin only.
//
//	GET    /wunder/admin/users                        ?limit=&cursor=
//	GET    /wunder/admin/users/{user_id}/sessions     ?limit=&cursor=
//	DELETE /wunder/admin/users/{user_id}?confirm={user_id}

// UserData is what the users routes need of the core.
type UserData interface {
	Users(ctx context.Context, page orchestrator.Page) ([]orchestrator.UserStats, error)
	DeleteUserData(ctx context.Context, userID string) error
}

var _ UserData = (*orchestrator.Orchestrator)(nil)

func (s *Server) userDataRoutes() {
	ud, ok := s.b.(UserData)
	if !ok {
		return
	}
	s.mux.HandleFunc("GET /wunder/admin/users", func(w http.ResponseWriter, r *http.Request) {
		if !adminOnly(w, r) {
			return
		}
		p, err := pageOf(r, "user_stats")
		if err != nil {
			writeError(w, r, err)
			return
		}
		users, err := ud.Users(r.Context(), p.Page)
		if err != nil {
			writeError(w, r, err)
			return
		}
		users, next := orchestrator.CutPage(p, users, orchestrator.UserStatsKey)
		writeJSON(w, r, http.StatusOK, map[string]any{"users": users, "next_cursor": next})
	})
	s.mux.HandleFunc("GET /wunder/admin/users/{user_id}/sessions", func(w http.ResponseWriter, r *http.Request) {
		if !adminOnly(w, r) {
			return
		}
		user := r.PathValue("user_id")
		if err := orchestrator.ValidateUserID(user); err != nil {
			writeError(w, r, err)
			return
		}
		p, err := pageOf(r, "sessions", user)
		if err != nil {
			writeError(w, r, err)
			return
		}
		sessions, err := s.b.ListSessions(r.Context(), user, p.Page)
		if err != nil {
			writeError(w, r, err)
			return
		}
		sessions, next := orchestrator.CutPage(p, sessions, orchestrator.SessionKey)
		writeJSON(w, r, http.StatusOK, map[string]any{"user_id": user, "sessions": sessions, "next_cursor": next})
	})
	s.mux.HandleFunc("DELETE /wunder/admin/users/{user_id}", func(w http.ResponseWriter, r *http.Request) {
		if !adminOnly(w, r) {
			return
		}
		user := r.PathValue("user_id")
		if err := orchestrator.ValidateUserID(user); err != nil || user == "" {
			writeError(w, r, fmt.Errorf("%w: user_id is not a valid user id", orchestrator.ErrInvalidArgument))
			return
		}
		if r.URL.Query().Get("confirm") != user {
			writeProblem(w, r, http.StatusBadRequest, "confirmation_required",
				"deleting a user's sessions, runs, events and workspace cannot be undone: repeat the user id as ?confirm="+user)
			return
		}
		if err := ud.DeleteUserData(r.Context(), user); err != nil {
			writeError(w, r, err)
			return
		}
		if del := s.opts.DeleteWorkspace; del != nil {
			if err := del(r.Context(), user); err != nil {
				writeError(w, r, fmt.Errorf("%w: the user's runs are deleted, their workspace is not: %v", orchestrator.ErrUnavailable, err))
				return
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
