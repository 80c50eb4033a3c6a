package config

import "path/filepath"

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
	// Enabled names the skills offered; omitted (null) means every skill
	// found, [] means none. Default null.
	Enabled []string `yaml:"enabled"`
	// AllowUserCode is reserved for user-uploaded skills: whether their
	// entry scripts may run. Default false.
	AllowUserCode bool `yaml:"allow_user_code"`
}

func skillsDefaults() Skills { return Skills{RetentionTurns: 5} }

// SkillPaths returns skills.paths, or its derived default.
func (c *Config) SkillPaths() []string {
	if len(c.Skills.Paths) > 0 {
		return c.Skills.Paths
	}
	return []string{filepath.Join(c.DataDir, "skills"), "skills"}
}
