package main

import (
	"net/http"
	"testing"
)

// The skill rows of the isolation matrix (isolation_test.go). Alice
// uploads three skills: iso-skill, which she shares (bob may run it as
// alice@iso-skill, but never read, list or delete it through the
// routes), and iso-del1 and iso-del2 for the delete row (she deletes the
// first; the others try the second).

// setupSkills uploads alice's skills and shares iso-skill.
func (f *fixture) setupSkills(t *testing.T) {
	t.Helper()
	for _, name := range []string{"iso-skill", "iso-del1", "iso-del2"} {
		z := buildZip(t, zipFile{name: "SKILL.md", data: skillDoc(name, "Alice's private instructions.")})
		mustStatus(t, f.uploadSkill(t, "/wunder/user_tools/skills/upload", z, bearerOf(f.alice)), 201)
	}
	mustStatus(t, f.rest(t, "POST", "/wunder/user_tools/skills", `{"shared":["iso-skill"]}`, bearerOf(f.alice)), 200)
	// The server's own skills, for adminSkillRows: one to read and enable,
	// one to delete.
	for _, name := range []string{"iso-server", "iso-server-del"} {
		z := buildZip(t, zipFile{name: "SKILL.md", data: skillDoc(name, "The server's instructions.")})
		mustStatus(t, f.uploadSkill(t, "/wunder/admin/skills/upload", z, map[string]string{"X-API-Key": "admin-key"}), 201)
	}
}

// adminSkillRows are the rows of the server's skills (/wunder/admin/skills
// and its upload, content and delete): an administrator's only, whatever
// user a caller names; monitorRows has the listing.
func (f *fixture) adminSkillRows(t *testing.T) []matrixRow {
	adminOnly := [4]string{forbidden, forbidden, forbidden, ok}
	named := func(path string, c caller) string {
		if c.names != "" {
			return path + sep(path) + "user_id=" + c.names
		}
		return path
	}
	row := func(action string, try func(t *testing.T, c caller) *http.Response) matrixRow {
		return matrixRow{frontend: "REST", resource: "skills (server-wide, admin)", action: action, want: adminOnly,
			try: func(t *testing.T, c caller) string { return restOutcome(try(t, c)) }}
	}
	upload := buildZip(t, zipFile{name: "SKILL.md", data: skillDoc("iso-server-up", "Uploaded by the matrix.")})
	return []matrixRow{
		row("upload", func(t *testing.T, c caller) *http.Response {
			return f.uploadSkill(t, named("/wunder/admin/skills/upload", c), upload, c.hdr)
		}),
		row("read SKILL.md and files", func(t *testing.T, c caller) *http.Response {
			return f.rest(t, "GET", named("/wunder/admin/skills/content?name=iso-server", c), "", c.hdr)
		}),
		row("enable", func(t *testing.T, c caller) *http.Response {
			return f.rest(t, "POST", named("/wunder/admin/skills", c), `{"enabled":["iso-server"]}`, c.hdr)
		}),
		row("delete", func(t *testing.T, c caller) *http.Response {
			return f.rest(t, "DELETE", named("/wunder/admin/skills?name=iso-server-del", c), "", c.hdr)
		}),
	}
}

func (f *fixture) skillRows() []matrixRow {
	std := [4]string{ok, denied, forbidden, ok}
	var rows []matrixRow
	row := func(resource, action, method, path string, want [4]string, outcome func(t *testing.T, c caller, method, path string) string) {
		rows = append(rows, matrixRow{frontend: "REST", resource: resource, action: action, want: want,
			try: func(t *testing.T, c caller) string {
				p := path
				if c.names != "" {
					p += sep(p) + "user_id=" + c.names
				}
				return outcome(t, c, method, p)
			}})
	}
	plain := func(t *testing.T, c caller, method, path string) string {
		return restOutcome(f.rest(t, method, path, "", c.hdr))
	}
	row("skill (uploaded, shared)", "list own skills", "GET", "/wunder/user_tools/skills", std,
		func(t *testing.T, c caller, method, path string) string {
			return listOutcome(f.rest(t, method, path, "", c.hdr), `"iso-skill"`)
		})
	row("skill (uploaded, shared)", "read SKILL.md and files", "GET", "/wunder/user_tools/skills/content?name=iso-skill", std, plain)
	row("skill (uploaded, shared)", "read as alice@iso-skill", "GET", "/wunder/user_tools/skills/content?name=alice@iso-skill", std, plain)
	rows = append(rows, matrixRow{frontend: "REST", resource: "skill (uploaded)", action: "delete", want: std,
		try: func(t *testing.T, c caller) string {
			path := "/wunder/user_tools/skills?name=iso-del2"
			if c.name == "alice" {
				path = "/wunder/user_tools/skills?name=iso-del1"
			}
			if c.names != "" {
				path += "&user_id=" + c.names
			}
			return restOutcome(f.rest(t, "DELETE", path, "", c.hdr))
		}})
	// Shared, bob may select it in his own runs (it runs in his workspace).
	rows = append(rows, matrixRow{frontend: "REST", resource: "skill (uploaded, shared)", action: "use in a run (tool_names)",
		want: [4]string{ok, ok, forbidden, ok},
		try: func(t *testing.T, c caller) string {
			body := `{"question":"hello","stream":false,"tool_names":["alice@iso-skill"]}`
			if c.names != "" {
				body = `{"user_id":"` + c.names + `","question":"hello","stream":false,"tool_names":["alice@iso-skill"]}`
			}
			return restOutcome(f.rest(t, "POST", "/wunder", body, c.hdr))
		}})
	return rows
}
