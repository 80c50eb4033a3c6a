package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// `wunder config diff`: what the override the admin API wrote changes
// against the base file, one key path a line, secrets masked.

// writeConfigFile writes a configuration file whose data_dir is dir, plus
// extra YAML, and returns its path.
func writeConfigFile(t *testing.T, dir, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "wunder.yaml")
	body := "data_dir: " + dir + "\n" + extra
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The override written through the real admin API (a server on the same
// data directory) shows as its changes: a scalar changed, an MCP server
// added with its token masked; without an override the command says so.
func TestConfigDiffCommand(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "k" })
	file := writeConfigFile(t, s.dir, "server:\n  max_body_bytes: 1048576\n")

	code, out, errs := runCLI(t, t.Context(), "config", "diff", "--config", file)
	if code != exitOK || !strings.HasPrefix(out, "no override file at "+config.OverridePath(s.dir)) {
		t.Fatalf("before any change: exit %d\n%s%s", code, out, errs)
	}

	if code, body := adminDo(t, s, "POST", "/wunder/admin/server", `{"max_body_bytes":2097152}`); code != 200 {
		t.Fatalf("POST /wunder/admin/server: %d %v", code, body)
	}
	if code, body := adminDo(t, s, "POST", "/wunder/admin/mcp", `{"servers":[{"name":"web","url":"http://127.0.0.1:9/mcp","bearer_token":"very-secret-token","enabled":false}]}`); code != 200 {
		t.Fatalf("POST /wunder/admin/mcp: %d %v", code, body)
	}

	code, out, errs = runCLI(t, t.Context(), "config", "diff", "--config", file)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "override "+config.OverridePath(s.dir)+" (revision 2): ") {
		t.Errorf("header %q; want the override's path and revision 2", lines[0])
	}
	for _, want := range []string{
		"  server.max_body_bytes: 1048576 -> 2097152",
		`  mcp.servers: [] -> (unset)`,
		`  mcp.servers[0].name: (unset) -> "web"`,
		`  mcp.servers[0].url: (unset) -> "http://127.0.0.1:9/mcp"`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("no line %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "very-secret-token") {
		t.Errorf("the token is shown:\n%s", out)
	}
	if !strings.Contains(out, "mcp.servers[0].bearer_token: (unset) -> ") {
		t.Errorf("the token's change is not listed (masked):\n%s", out)
	}
	// Lines are sorted by key path, and their count is in the header.
	paths := make([]string, 0, len(lines)-1)
	for _, l := range lines[1:] {
		p, _, _ := strings.Cut(strings.TrimSpace(l), ": ")
		paths = append(paths, p)
	}
	for i := 1; i < len(paths); i++ {
		if paths[i-1] > paths[i] {
			t.Errorf("lines not sorted: %q before %q", paths[i-1], paths[i])
		}
	}
	if !strings.HasSuffix(lines[0], ": "+itoa(len(lines)-1)+" change(s)") {
		t.Errorf("header %q; %d change lines follow", lines[0], len(lines)-1)
	}
}

// A base file that is invalid is an invalid configuration (exit 4), named
// as the base without the override; so is an override that breaks it.
func TestConfigDiffInvalid(t *testing.T) {
	dir := dataDir(t)
	bad := writeConfigFile(t, dir, "server:\n  port: 70000\n")
	code, _, errs := runCLI(t, t.Context(), "config", "diff", "--config", bad)
	if code != exitConfig || !strings.Contains(errs, "without the override") || !strings.Contains(errs, "server.port") {
		t.Errorf("invalid base: exit %d\n%s", code, errs)
	}

	good := writeConfigFile(t, dir, "")
	override := "# wunder override revision: 7\nserver:\n  port: 70000\n"
	if err := config.WriteOverride(config.OverridePath(dir), []byte(override)); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, t.Context(), "config", "diff", "--config", good)
	if code != exitConfig || strings.Contains(errs, "without the override") || !strings.Contains(errs, "server.port") {
		t.Errorf("invalid override: exit %d\n%s", code, errs)
	}
	if code, _, errs := runCLI(t, t.Context(), "config", "diff", "extra-arg", "--config", good); code != exitUsage {
		t.Errorf("an argument: exit %d %s", code, errs)
	}
}

// configDiff's lines for values on one side only, changed, and equal
// (left out); lists and maps emptied show as [] and {}.
func TestConfigDiffLines(t *testing.T) {
	a, b := config.Default(), config.Default()
	b.Server.Port = a.Server.Port + 1
	b.Tools.Builtin.Enabled = []string{"read_file"}
	a.CORS.AllowOrigins = []string{"https://a.example"}
	b.CORS.AllowOrigins = nil
	got, err := configDiff(a, b)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{
		"  server.port: " + itoa(a.Server.Port) + " -> " + itoa(b.Server.Port),
		`  tools.builtin.enabled[0]: (unset) -> "read_file"`,
		`  cors.allow_origins[0]: "https://a.example" -> (unset)`,
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %q in:\n%s", want, joined)
		}
	}
	same, err := configDiff(a, a)
	if err != nil || len(same) != 0 {
		t.Errorf("a configuration against itself: %v %v", same, err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
