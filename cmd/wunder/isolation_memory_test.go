package main

import (
	"testing"
	"time"

	"github.com/wunder/wunder/memory"
)

// memoryRows are the isolation matrix's rows of long-term memory. Alice's
// records are put in the store directly (session ids of their own, so the
// summaries of her other runs never replace them); each destructive row
// puts back the record it needs before every caller's try, and reads
// alice's records afterwards: a caller reached them only if they changed.
func (f *fixture) memoryRows(t *testing.T) []matrixRow {
	st := f.s.app.store
	put := func(session, summary string) {
		t.Helper()
		rec := &memory.Record{ID: "mem_iso_" + session, UserID: "alice", SessionID: session, Summary: summary, CreatedAt: time.Now()}
		if err := st.PutMemoryRecord(t.Context(), rec, 30); err != nil {
			t.Fatal(err)
		}
	}
	summaryOf := func(session string) (string, bool) {
		recs, err := st.ListMemoryRecords(t.Context(), "alice")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.SessionID == session {
				return r.Summary, true
			}
		}
		return "", false
	}
	put("sess_mem_read", "alice likes teal")
	if err := st.SetMemoryEnabled(t.Context(), "alice", true, time.Now()); err != nil {
		t.Fatal(err)
	}
	task := &memory.Task{ID: "mem_task_iso", UserID: "alice", SessionID: "sess_mem_gone", RunID: f.runA, Language: "en", QueuedAt: time.Now()}
	if err := st.EnqueueMemoryTask(t.Context(), task, 100); err != nil {
		t.Fatal(err)
	}

	// changed is the outcome of a call that may edit or delete alice's
	// record of session: ok only when it did.
	changed := func(session string, call func(c caller) string) func(t *testing.T, c caller) string {
		return func(t *testing.T, c caller) string {
			put(session, "before")
			out := call(c)
			after, found := summaryOf(session)
			if out == ok && found && after == "before" {
				return denied // answered, but alice's record is as it was
			}
			return out
		}
	}
	user := func(path string, c caller) string {
		if c.names != "" {
			return path + sep(path) + "user_id=" + c.names
		}
		return path
	}
	std := [4]string{ok, denied, forbidden, ok}
	adminOnly := [4]string{forbidden, forbidden, forbidden, ok}
	admin := func(resource, action, method, path, body string) matrixRow {
		return matrixRow{frontend: "REST", resource: resource, action: action, want: adminOnly,
			try: func(t *testing.T, c caller) string { return restOutcome(f.rest(t, method, path, body, c.hdr)) }}
	}
	adminChange := func(resource, action, method, path, body, session string) matrixRow {
		return matrixRow{frontend: "REST", resource: resource, action: action, want: adminOnly,
			try: changed(session, func(c caller) string { return restOutcome(f.rest(t, method, path, body, c.hdr)) })}
	}
	return []matrixRow{
		{frontend: "REST", resource: "memory records (own)", action: "list", want: std,
			try: func(t *testing.T, c caller) string {
				return listOutcome(f.rest(t, "GET", user("/wunder/memory", c), "", c.hdr), "alice likes teal")
			}},
		{frontend: "REST", resource: "memory record (own)", action: "edit", want: std,
			try: changed("sess_mem_edit", func(c caller) string {
				return restOutcome(f.rest(t, "PUT", user("/wunder/memory/sess_mem_edit", c), `{"summary":"edited"}`, c.hdr))
			})},
		{frontend: "REST", resource: "memory record (own)", action: "delete", want: std,
			try: changed("sess_mem_del", func(c caller) string {
				return restOutcome(f.rest(t, "DELETE", user("/wunder/memory/sess_mem_del", c), "", c.hdr))
			})},
		{frontend: "REST", resource: "memory records (own)", action: "delete all", want: std,
			try: changed("sess_mem_clear", func(c caller) string {
				return restOutcome(f.rest(t, "DELETE", user("/wunder/memory", c), "", c.hdr))
			})},
		{frontend: "REST", resource: "memory switch (own)", action: "set", want: std,
			try: func(t *testing.T, c caller) string {
				if err := st.SetMemoryEnabled(t.Context(), "alice", true, time.Now()); err != nil {
					t.Fatal(err)
				}
				out := restOutcome(f.rest(t, "PUT", user("/wunder/memory/enabled", c), `{"enabled":false}`, c.hdr))
				on, err := st.MemoryEnabled(t.Context(), "alice")
				if err != nil {
					t.Fatal(err)
				}
				if out == ok && on {
					out = denied // answered for the caller's own switch, alice's is as it was
				}
				return out
			}},
		admin("memory: users", "list", "GET", "/wunder/admin/memory/users", ""),
		admin("memory: tasks", "list", "GET", "/wunder/admin/memory/status", ""),
		admin("memory: task", "get", "GET", "/wunder/admin/memory/status/mem_task_iso", ""),
		admin("memory: user's records", "get", "GET", "/wunder/admin/memory/alice", ""),
		admin("memory: user's switch", "set", "POST", "/wunder/admin/memory/alice/enabled", `{"enabled":true}`),
		adminChange("memory: user's record", "edit", "PUT", "/wunder/admin/memory/alice/sess_mem_aedit", `{"summary":"edited"}`, "sess_mem_aedit"),
		adminChange("memory: user's record", "delete", "DELETE", "/wunder/admin/memory/alice/sess_mem_adel", "", "sess_mem_adel"),
		adminChange("memory: user's records", "delete all", "DELETE", "/wunder/admin/memory/alice", "", "sess_mem_aclear"),
	}
}
