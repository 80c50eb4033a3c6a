package lsp

import (
	"os/exec"
	"slices"
	"strings"
)

// ServerConfig is one language server: config lsp.servers[].
type ServerConfig struct {
	// ID names the server (gopls, pyright, ...); it is part of the pool key.
	ID string
	// Command is argv: the server speaking LSP on stdio.
	Command []string
	// Env is added to the server's built environment (serverEnv, process.go)
	// and wins over what wunder passes on.
	Env map[string]string
	// Extensions are the file extensions (".go") the server handles.
	Extensions []string
	// RootMarkers are file names that mark a project root (go.mod).
	RootMarkers []string
	// InitializationOptions is sent as initialize's initializationOptions
	// (raw JSON; nil sends none).
	InitializationOptions []byte
}

// Handles reports whether the server handles the file at path.
func (s ServerConfig) Handles(path string) bool {
	for _, e := range s.Extensions {
		if strings.HasSuffix(strings.ToLower(path), strings.ToLower(e)) {
			return true
		}
	}
	return false
}

// Presets are the servers wunder knows without configuration. [Resolve]
// offers each only when its binary is on PATH or the configuration names it.
func Presets() []ServerConfig {
	return []ServerConfig{
		{ID: "gopls", Command: []string{"gopls"}, Extensions: []string{".go"},
			RootMarkers: []string{"go.work", "go.mod"}},
		{ID: "typescript-language-server", Command: []string{"typescript-language-server", "--stdio"},
			Extensions:  []string{".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs"},
			RootMarkers: []string{"tsconfig.json", "jsconfig.json", "package.json"}},
		{ID: "pyright", Command: []string{"pyright-langserver", "--stdio"}, Extensions: []string{".py", ".pyi"},
			RootMarkers: []string{"pyrightconfig.json", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"}},
		{ID: "bash-language-server", Command: []string{"bash-language-server", "start"},
			Extensions: []string{".sh", ".bash"}, RootMarkers: []string{".git"}},
	}
}

// Configured is one configured server: a full definition, an override of a
// preset with the same ID (empty fields keep the preset's), or with
// Disabled set, a preset switched off.
type Configured struct {
	ServerConfig
	Disabled bool
}

// Resolve merges configured servers over the presets. A preset is kept
// when the configuration names it or when its command is found by lookPath
// (nil means [exec.LookPath]); a disabled entry removes its ID. Configured
// servers keep their order and come first, then the presets found.
func Resolve(configured []Configured, lookPath func(string) (string, error)) []ServerConfig {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	presets := Presets()
	var out []ServerConfig
	seen := map[string]bool{}
	for _, c := range configured {
		seen[c.ID] = true
		if c.Disabled {
			continue
		}
		s := c.ServerConfig
		if i := slices.IndexFunc(presets, func(p ServerConfig) bool { return p.ID == c.ID }); i >= 0 {
			p := presets[i]
			if len(s.Command) == 0 {
				s.Command = p.Command
			}
			if len(s.Extensions) == 0 {
				s.Extensions = p.Extensions
			}
			if len(s.RootMarkers) == 0 {
				s.RootMarkers = p.RootMarkers
			}
		}
		if len(s.Command) > 0 && len(s.Extensions) > 0 {
			out = append(out, s)
		}
	}
	for _, p := range presets {
		if seen[p.ID] {
			continue
		}
		if _, err := lookPath(p.Command[0]); err == nil {
			out = append(out, p)
		}
	}
	return out
}
