package main

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/config"
)

// The pass-through's owners of peer tasks expire, on both backends: the
// janitor deletes what was not used for storage.a2a_peer_id_retention_days
// and keeps what was; alice then reaches her forgotten task no more — it is
// TaskNotFound (404 over HTTP+JSON), as a task wunder never saw — and
// still reaches the other.
func TestA2APeerIDsExpire(t *testing.T) {
	backends := map[string]string{"sqlite": ""}
	if dsn := os.Getenv("WUNDER_TEST_POSTGRES_DSN"); dsn != "" || os.Getenv("WUNDER_REQUIRE_POSTGRES") == "1" {
		backends["postgres"] = pgSchema(t)
	}
	for name, dsn := range backends {
		t.Run(name, func(t *testing.T) {
			peer := startPassPeer(t)
			f, tok := passWunder(t, peer, func(c *config.Config) {
				c.Storage.Postgres.DSN = dsn
				c.Storage.A2APeerIDRetentionDays = 1
			})
			alice := bearerOf(tok["alice"])
			send := func() string {
				t.Helper()
				res, code := f.a2aAt(t, "/a2a/peer", "1.0", "SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"wait"}]}}`, alice)
				var sent struct{ Task struct{ ID string } }
				if err := json.Unmarshal(res, &sent); code != 0 || err != nil || sent.Task.ID == "" {
					t.Fatalf("alice's send: %s %d %v", res, code, err)
				}
				return sent.Task.ID
			}
			get := func(task string) int {
				t.Helper()
				_, code := f.a2aAt(t, "/a2a/peer", "1.0", "GetTask", `{"id":"`+task+`"}`, alice)
				return code
			}
			old := send()
			between := time.Now()
			kept := send()
			if get(old) != 0 || get(kept) != 0 {
				t.Fatalf("alice's tasks before the janitor: %d, %d", get(old), get(kept))
			}
			// A day after between: the first task (and its context) was
			// last used before the cutoff, the second after.
			rep, err := f.s.app.janitor.runOnce(t.Context(), between.Add(24*time.Hour))
			if err != nil || rep.PeerIDs != 2 {
				t.Fatalf("the janitor: %+v %v; want the task and context of the first send deleted", rep, err)
			}
			unknown := get("never-made-here")
			if unknown != -32001 {
				t.Fatalf("a task wunder never saw: %d; want -32001", unknown)
			}
			if code := get(old); code != unknown {
				t.Errorf("alice's forgotten task: %d; want %d, as a task wunder never saw", code, unknown)
			}
			if r := f.rest(t, "GET", "/a2a/peer/v1/tasks/"+old, "", alice); r.StatusCode != http.StatusNotFound {
				t.Errorf("alice's forgotten task over HTTP+JSON: %d; want 404", r.StatusCode)
			}
			if code := get(kept); code != 0 {
				t.Errorf("alice's task used after the cutoff: %d; want it", code)
			}
			if !peer.made(old) {
				t.Errorf("the peer never made %s", old) // the task is still there: only wunder forgot whose it is
			}
		})
	}
}
