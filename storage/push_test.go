package storage

import (
	"errors"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// The A2A push configs on both backends.
func TestPushConfigs(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { testPushConfigs(t, open(t, b.fresh(t))) })
	}
}

func testPushConfigs(t *testing.T, st *Store) {
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Second)
	if err := st.CreateSession(ctx, &orchestrator.Session{ID: "s1", UserID: "u", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateRun(ctx, &orchestrator.Run{ID: "r1", SessionID: "s1", UserID: "u", State: orchestrator.RunRunning, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	c := &PushConfig{TaskID: "r1", ID: "p1", UserID: "u", URL: "https://h/1", Token: "t", AuthScheme: "Bearer", AuthCredentials: "c", Version: "1.0", CreatedAt: now}
	if err := st.SavePushConfig(ctx, c); err != nil {
		t.Fatal(err)
	}
	c.URL = "https://h/2"
	if err := st.SavePushConfig(ctx, c); err != nil {
		t.Fatalf("replace: %v", err)
	}
	if err := st.SavePushConfig(ctx, &PushConfig{TaskID: "r1", ID: "p2", UserID: "u", URL: "https://h/3", CreatedAt: now.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	got, err := st.GetPushConfig(ctx, "r1", "p1")
	if err != nil || got.URL != "https://h/2" || got.AuthScheme != "Bearer" || got.Version != "1.0" || got.ID != "p1" {
		t.Fatalf("get: %+v %v", got, err)
	}
	list, err := st.ListPushConfigs(ctx, "r1")
	if err != nil || len(list) != 2 || list[0].ID != "p1" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := st.DeletePushConfig(ctx, "r1", "p1"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeletePushConfig(ctx, "r1", "p1"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	if _, err := st.GetPushConfig(ctx, "r1", "p1"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatalf("get deleted: %v", err)
	}
	if err := st.SavePushConfig(ctx, &PushConfig{TaskID: "nope", ID: "p", URL: "https://h", CreatedAt: now}); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatalf("config of an unknown run: %v", err)
	}
}

// Push configs keep times as every other row does: microseconds, UTC, and
// zero is now; both backends read back the same time.
func TestPushConfigTimes(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			st, ctx := open(t, b.fresh(t)), t.Context()
			must(t, st.CreateSession(ctx, &orchestrator.Session{ID: "s1", UserID: "u"}))
			must(t, st.CreateRun(ctx, &orchestrator.Run{ID: "r1", SessionID: "s1", UserID: "u", State: orchestrator.RunRunning}))
			at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
			must(t, st.SavePushConfig(ctx, &PushConfig{TaskID: "r1", ID: "p1", URL: "https://h/1", CreatedAt: at}))
			must(t, st.SavePushConfig(ctx, &PushConfig{TaskID: "r1", ID: "p2", URL: "https://h/2"}))
			got, err := st.GetPushConfig(ctx, "r1", "p1")
			must(t, err)
			if want := at.Truncate(time.Microsecond).UTC(); !got.CreatedAt.Equal(want) || got.CreatedAt.Nanosecond() != want.Nanosecond() {
				t.Errorf("CreatedAt = %v, want %v", got.CreatedAt, want)
			}
			got, err = st.GetPushConfig(ctx, "r1", "p2")
			must(t, err)
			if time.Since(got.CreatedAt) > time.Minute {
				t.Errorf("zero CreatedAt stored as %v, want now", got.CreatedAt)
			}
			for _, c := range []*PushConfig{nil, {TaskID: "r1"}, {ID: "p3"}} {
				if err := st.SavePushConfig(ctx, c); !errors.Is(err, orchestrator.ErrInvalidArgument) {
					t.Errorf("SavePushConfig(%+v) = %v, want ErrInvalidArgument", c, err)
				}
			}
		})
	}
}
