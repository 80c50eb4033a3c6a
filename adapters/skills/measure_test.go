package skills_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/wunder/wunder/adapters/skills"
	"github.com/wunder/wunder/orchestrator"
)

// TestMeasurePromptTokens logs (never asserts) the system prompt tokens of
// a 10-turn conversation with 10 skills: static injection (every body in
// every prompt) against lazy loading (summaries, plus one skill loaded in
// turn 1 and kept for retention_turns). Tokens by tiktoken's cl100k_base,
// offline. The 10 skills are the 3 examples and 7 copies of them renamed,
// so the bodies are real instructions.
func TestMeasurePromptTokens(t *testing.T) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	base := skills.New(&skills.Options{Paths: []string{repoSkills}}).Skills()
	for i := range 10 {
		sk := base[i%len(base)]
		body := sk.Body
		writeSkill(t, root, fmt.Sprintf("s%02d", i), fmt.Sprintf("---\nname: s%02d-%s\ndescription: %s\n---\n%s\n", i, sk.Name, sk.Description, body), map[string]string{})
	}
	const retention, turns = 5, 10
	set := skills.New(&skills.Options{Paths: []string{root}, RetentionTurns: retention})
	if n := len(set.Skills()); n != 10 {
		t.Fatalf("%d skills", n)
	}
	first := set.Skills()[1].Name
	count := func(s string) int { return len(enc.Encode(s, nil, nil)) }
	var static, lazy int
	for turn := range turns {
		// Static: every body, always (what the prompt would be with all
		// skills preloaded).
		var all []string
		for _, sk := range set.Skills() {
			all = append(all, sk.Name)
		}
		in := orchestrator.PromptContext{Selected: []string{skills.LoadSkillTool}, Preload: all, Turn: turn}
		c, _ := set.ContributePrompt(t.Context(), in)
		static += count(c.Prompt)
		// Lazy: one skill loaded in turn 0.
		in = orchestrator.PromptContext{Selected: []string{skills.LoadSkillTool}, Turn: turn,
			Calls: []orchestrator.PastCall{{Turn: 0, Name: skills.LoadSkillTool, Arguments: []byte(`{"name":"` + first + `"}`)}}}
		c, _ = set.ContributePrompt(t.Context(), in)
		lazy += count(c.Prompt)
		if turn == 0 && !strings.Contains(c.Prompt, "### Loaded skill: "+first) {
			t.Fatalf("lazy prompt of turn 0 lacks the loaded skill")
		}
	}
	t.Logf("skills section of the system prompt over %d turns, 10 skills, cl100k_base tokens: static %d, lazy %d (retention %d); "+
		"lazy/static = %.3f, saving %.1f%%", turns, static, lazy, retention, float64(lazy)/float64(static), 100*(1-float64(lazy)/float64(static)))
}
