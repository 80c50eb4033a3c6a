package main

import (
	"log/slog"

	"github.com/wunder/wunder/adapters/builtin"
	"github.com/wunder/wunder/adapters/skills"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/sandbox"
)

// newSkills builds the skills toolset from the skills section: skills from
// skills.paths, entry scripts run in the same sandbox (and with the same
// timeout) as ptc, in the caller's workspace.
func newSkills(cfg *config.Config, log *slog.Logger, tools *builtin.Set, sb *sandbox.Sandbox) *skills.Set {
	s := skills.New(&skills.Options{
		Paths: cfg.SkillPaths(), RetentionTurns: cfg.Skills.RetentionTurns, Enabled: cfg.Skills.Enabled,
		Sandbox: sb, Timeout: commandTimeout(cfg), Logger: log,
		Workspace: func(userID string) (string, error) {
			ws, err := tools.Workspace(userID)
			if err != nil {
				return "", err
			}
			return ws.Resolve("")
		},
	})
	log.Info("skills loaded", "count", len(s.Skills()), "paths", cfg.SkillPaths())
	return s
}
