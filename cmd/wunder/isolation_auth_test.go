package main

import (
	"encoding/json"
	"fmt"
	"io"
	"testing"
)

// authRows are the isolation matrix's rows of a person's own sign-in:
// who they are (auth/me) and logging out, which revokes only the token it
// is called with. Neither route takes a user to name, so "bob naming
// alice" is bob, and the admin key is no user's sign-in: only alice
// reaches hers.
func (f *fixture) authRows() []matrixRow {
	named := func(path string, c caller) string {
		if c.names != "" {
			return path + sep(path) + "user_id=" + c.names
		}
		return path
	}
	mine := [4]string{ok, denied, denied, denied}
	return []matrixRow{
		{frontend: "REST", resource: "sign-in (account)", action: "who am I (auth/me)", want: mine,
			try: func(t *testing.T, c caller) string {
				r := f.rest(t, "GET", named("/wunder/auth/me", c), "", c.hdr)
				if r.StatusCode != 200 {
					return restOutcome(r)
				}
				defer r.Body.Close()
				var me struct {
					UserID string `json:"user_id"`
				}
				if err := json.NewDecoder(r.Body).Decode(&me); err != nil {
					t.Fatalf("auth/me: %v", err)
				}
				if me.UserID == "alice" {
					return ok
				}
				return denied
			}},
		// Each caller logs out with a token of its own (bob's a fresh one,
		// so the matrix's tokens live on); alice's sign-in was reached when
		// a fresh token of hers stopped working.
		{frontend: "REST", resource: "sign-in (account)", action: "log out (revokes a token)", want: mine,
			try: func(t *testing.T, c caller) string {
				victim := f.login(t, "alice")
				hdr := c.hdr
				switch c.name {
				case "alice":
					hdr = bearerOf(victim)
				case "bob", "bob naming alice":
					hdr = bearerOf(f.login(t, "bob"))
				}
				r := f.rest(t, "POST", named("/wunder/auth/logout", c), "", hdr)
				_, _ = io.Copy(io.Discard, r.Body)
				r.Body.Close()
				me := f.rest(t, "GET", "/wunder/auth/me", "", bearerOf(victim))
				_, _ = io.Copy(io.Discard, me.Body)
				me.Body.Close()
				switch me.StatusCode {
				case 401:
					return ok
				case 200:
					return denied
				}
				return fmt.Sprintf("HTTP %d", me.StatusCode)
			}},
	}
}
