package main

import (
	"encoding/base64"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// The files of an A2A message in real workspaces: a message whose second
// part the workspace refuses (security.deny_globs), and one whose run the
// core refuses, leave no folder of theirs in any workspace, and are
// refused as before (-32602 naming the file, or the contextId); the
// failures to clean up are a series of /metrics (none here).
func TestA2AFilesRefusedLeaveNothing(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Security.DenyGlobs = []string{"**/*.pem"}
	})
	f := &fixture{s: s}
	folders := func() []string {
		t.Helper()
		var out []string
		err := filepath.WalkDir(filepath.Join(s.dir, "workspaces"), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && strings.HasPrefix(d.Name(), "msg_") {
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	send := func(message string) (int, string) {
		t.Helper()
		r := f.rest(t, "POST", "/a2a", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER",`+message+`}}}`,
			map[string]string{"A2A-Version": "1.0"})
		var resp struct {
			Error *struct {
				Code    int
				Message string
			}
		}
		decodeInto(t, r, 200, &resp)
		if resp.Error == nil {
			return 0, ""
		}
		return resp.Error.Code, resp.Error.Message
	}
	key := base64.StdEncoding.EncodeToString([]byte("-----BEGIN PRIVATE KEY-----"))

	// Accepted: its folder is there (what the checks below look for).
	if code, msg := send(`"parts":[{"text":"q"},{"data":{"a":1}}]`); code != 0 || len(folders()) != 1 {
		t.Fatalf("an accepted message: %d %s, folders %v; want one folder", code, msg, folders())
	}
	code, msg := send(`"parts":[{"text":"q"},{"data":{"a":1}},{"raw":"` + key + `","filename":"key.pem","mediaType":"text/plain"}]`)
	if code != -32602 || !strings.Contains(msg, `"key.pem"`) || strings.Contains(msg, "stay") {
		t.Errorf("a denied second file: %d %q; want -32602 naming it", code, msg)
	}
	code, msg = send(`"contextId":"sess_none","parts":[{"text":"q"},{"data":{"a":1}}]`)
	if code != -32602 || !strings.Contains(msg, `contextId "sess_none"`) || strings.Contains(msg, "stay") {
		t.Errorf("a run the core refuses: %d %q; want -32602 naming the contextId", code, msg)
	}
	if got := folders(); len(got) != 1 {
		t.Errorf("folders after two refused messages: %v; want only the accepted one's", got)
	}
	if status, m := scrape(t, s.url, nil); status != 200 || m["wunder_a2a_file_cleanup_failures_total"] != 0 {
		t.Errorf("/metrics: %d, cleanup failures %v", status, m["wunder_a2a_file_cleanup_failures_total"])
	} else if _, ok := m["wunder_a2a_file_cleanup_failures_total"]; !ok {
		t.Errorf("/metrics has no wunder_a2a_file_cleanup_failures_total")
	}
}
