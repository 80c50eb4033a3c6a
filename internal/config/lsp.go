package config

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"
)

// LSP configures the language-server workers behind the lsp tool and the
// diagnostics summary of write_file, replace_text and edit_file (see
// docs/lsp.md).
type LSP struct {
	// Enabled turns the feature on. Default false.
	Enabled bool `yaml:"enabled"`
	// TimeoutSeconds (timeout_s) bounds one request to a server, and the
	// start and handshake of one. Default 30.
	TimeoutSeconds int `yaml:"timeout_s"`
	// DiagnosticsDebounceMillis (diagnostics_debounce_ms) is how long a write
	// waits, at most, for the server's diagnostics of the file. Default 2000.
	DiagnosticsDebounceMillis int `yaml:"diagnostics_debounce_ms"`
	// IdleTTLSeconds (idle_ttl_s) is how long an unused worker lives on.
	// Default 600.
	IdleTTLSeconds int `yaml:"idle_ttl_s"`
	// MaxWorkers bounds the running servers, across users; the least
	// recently used idle one is stopped to make room. Default 8.
	MaxWorkers int `yaml:"max_workers"`
	// Servers configure servers, or override or disable the presets (gopls,
	// typescript-language-server, pyright, bash-language-server) by id.
	// Default [].
	Servers []LSPServer `yaml:"servers"`
}

// Timeout is timeout_s as a duration.
func (l LSP) Timeout() time.Duration { return seconds(l.TimeoutSeconds) }

// DiagnosticsDebounce is diagnostics_debounce_ms as a duration.
func (l LSP) DiagnosticsDebounce() time.Duration {
	return time.Duration(l.DiagnosticsDebounceMillis) * time.Millisecond
}

// IdleTTL is idle_ttl_s as a duration.
func (l LSP) IdleTTL() time.Duration { return seconds(l.IdleTTLSeconds) }

// LSPServer is one entry of lsp.servers.
type LSPServer struct {
	// ID names the server; a preset's id overrides that preset (empty fields
	// keep its values). Letters, digits, ., - and _, unique. Required.
	ID string `yaml:"id"`
	// Name is a display name.
	Name string `yaml:"name"`
	// Command is argv of a server speaking LSP on stdio; empty = the preset's.
	Command []string `yaml:"command"`
	// Env is added to the server's environment.
	Env map[string]string `yaml:"env"`
	// Extensions are the file extensions the server handles (".go").
	Extensions []string `yaml:"extensions"`
	// RootMarkers are file names marking a project root (go.mod); plain
	// names only.
	RootMarkers []string `yaml:"root_markers"`
	// InitializationOptions is a JSON object sent as initialize's
	// initializationOptions; "" sends none.
	InitializationOptions string `yaml:"initialization_options"`
	// Enabled: false switches a server (or preset) off. Default true.
	Enabled bool `yaml:"enabled"`
}

// applyDefaults sets the defaults of a new lsp.servers entry.
func (s *LSPServer) applyDefaults() { *s = LSPServer{Enabled: true} }

var _ entryDefaulter = (*LSPServer)(nil)

func lspDefaults() LSP {
	return LSP{
		TimeoutSeconds:            30,
		DiagnosticsDebounceMillis: 2000,
		IdleTTLSeconds:            600,
		MaxWorkers:                8,
		Servers:                   []LSPServer{},
	}
}

var lspIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func (c *Config) validateLSP(v checker) {
	l := c.LSP
	atLeast(v, "lsp.timeout_s", l.TimeoutSeconds, 1)
	atLeast(v, "lsp.diagnostics_debounce_ms", l.DiagnosticsDebounceMillis, 1)
	atLeast(v, "lsp.idle_ttl_s", l.IdleTTLSeconds, 1)
	atLeast(v, "lsp.max_workers", l.MaxWorkers, 1)
	seen := map[string]bool{}
	for i, s := range l.Servers {
		p := indexPath("lsp.servers", i)
		switch {
		case !lspIDRE.MatchString(s.ID):
			v.fail(joinPath(p, "id"), "must be 1-64 letters, digits, ., - or _, got %s", quoteShort(s.ID))
		case seen[s.ID]:
			v.fail(joinPath(p, "id"), "%q is listed twice", s.ID)
		}
		seen[s.ID] = true
		for j, a := range s.Command {
			if a == "" || strings.ContainsRune(a, 0) {
				v.fail(indexPath(joinPath(p, "command"), j), "must be a non-empty argument")
			}
		}
		for j, e := range s.Extensions {
			if len(e) < 2 || e[0] != '.' || strings.ContainsAny(e, `/\ `) {
				v.fail(indexPath(joinPath(p, "extensions"), j), "must look like \".go\", got %s", quoteShort(e))
			}
		}
		for j, m := range s.RootMarkers {
			if m == "" || m == "." || m == ".." || strings.ContainsAny(m, "/\\\x00") {
				v.fail(indexPath(joinPath(p, "root_markers"), j), "must be a plain file name (no path), got %s", quoteShort(m))
			}
		}
		for k := range s.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				v.fail(joinPath(joinPath(p, "env"), k), "invalid variable name")
			}
		}
		if o := strings.TrimSpace(s.InitializationOptions); o != "" {
			var obj map[string]any
			if err := json.Unmarshal([]byte(o), &obj); err != nil {
				v.fail(joinPath(p, "initialization_options"), "must be a JSON object: %v", err)
			}
		}
	}
}
