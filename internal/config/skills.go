package config

import (
	"path/filepath"
	"time"
)

// Skills configures the skills tool source (adapters/skills, see
// docs/tools.md#skills).
type Skills struct {
	// Paths are directories holding one folder per skill (a folder with a
	// SKILL.md). Empty means <data_dir>/skills and ./skills (the examples
	// shipped with wunder). Default [].
	Paths []string `yaml:"paths"`
	// RetentionTurns is how many turns of a session a loaded skill stays
	// in the system prompt. Default 5.
	RetentionTurns int `yaml:"retention_turns"`
	// Enabled names the skills every user has (folders under paths and
	// admin uploads) that are offered, until an admin writes the list
	// through POST /wunder/admin/skills; omitted (null) means every skill
	// found, [] means none. Default null.
	Enabled []string `yaml:"enabled"`
	// AllowUserCode lets users' uploaded skills run their entry scripts
	// (in the sandbox) and connect their HTTP MCP servers. Off, a user's
	// skill is instructions only. Default false.
	AllowUserCode bool `yaml:"allow_user_code"`
	// MaxZipBytes caps an uploaded skill ZIP. Default 8 MiB.
	MaxZipBytes int64 `yaml:"max_zip_bytes"`
	// MaxFiles caps the files in an uploaded skill. Default 200.
	MaxFiles int `yaml:"max_files"`
	// MaxUnpackedBytes caps an uploaded skill's files once unpacked.
	// Default 32 MiB.
	MaxUnpackedBytes int64 `yaml:"max_unpacked_bytes"`
	// MCPIdleSeconds (mcp_idle_s) is how long a skill's MCP server stays
	// connected after its skill was last loaded in a prompt or one of its
	// tools last ran. Default 300.
	MCPIdleSeconds int `yaml:"mcp_idle_s"`
}

func skillsDefaults() Skills {
	return Skills{RetentionTurns: 5, MaxZipBytes: 8 << 20, MaxFiles: 200, MaxUnpackedBytes: 32 << 20, MCPIdleSeconds: 300}
}

// MCPIdle is mcp_idle_s as a duration.
func (s Skills) MCPIdle() time.Duration { return seconds(s.MCPIdleSeconds) }

// SkillPaths returns skills.paths, or its derived default.
func (c *Config) SkillPaths() []string {
	if len(c.Skills.Paths) > 0 {
		return c.Skills.Paths
	}
	return []string{filepath.Join(c.DataDir, "skills"), "skills"}
}

// SkillCacheDir is where uploaded skills are unpacked: <data_dir>/cache/skills.
func (c *Config) SkillCacheDir() string { return filepath.Join(c.DataDir, "cache", "skills") }

func (c *Config) validateSkills(v checker) {
	s := c.Skills
	atLeast(v, "skills.retention_turns", s.RetentionTurns, 1)
	atLeast(v, "skills.max_zip_bytes", s.MaxZipBytes, 1024)
	atLeast(v, "skills.max_files", s.MaxFiles, 1)
	atLeast(v, "skills.max_unpacked_bytes", s.MaxUnpackedBytes, 1024)
	atLeast(v, "skills.mcp_idle_s", s.MCPIdleSeconds, 1)
	for i, n := range s.Enabled {
		if n == "" {
			v.fail(indexPath("skills.enabled", i), "must not be empty")
		}
	}
}
