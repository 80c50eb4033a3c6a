package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// loadTool is load_skill over the skills a run offers.
type loadTool struct {
	set   *Set
	avail []*Skill
}

// maxLoadSpecs bounds the specs a Set remembers (one per distinct list of
// skills offered); past it, specs are built each time.
const maxLoadSpecs = 1024

// Spec is built once per list of skills: every run that offers skills
// asks for it, several times.
func (t *loadTool) Spec() orchestrator.ToolSpec {
	names := make([]string, len(t.avail))
	for i, sk := range t.avail {
		names[i] = sk.Canonical()
	}
	key := strings.Join(names, "\x00")
	if spec, ok := t.set.loadSpecs.Load(key); ok {
		return spec.(orchestrator.ToolSpec)
	}
	spec := loadSpec(names)
	if t.set.loadSpecsN.Load() < maxLoadSpecs {
		if _, loaded := t.set.loadSpecs.LoadOrStore(key, spec); !loaded {
			t.set.loadSpecsN.Add(1)
		}
	}
	return spec
}

func loadSpec(names []string) orchestrator.ToolSpec {
	schema, _ := json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{"name": map[string]any{
			"type": "string", "enum": names, "description": "The skill to load, as listed under Skills in the system prompt.",
		}},
		"required": []string{"name"},
	})
	return orchestrator.ToolSpec{
		Name: LoadSkillTool, Aliases: []string{"加载技能"},
		Description: "Load a skill's full instructions when the task matches its description. " +
			"From your next step on they are in the system prompt, for the next few turns of the conversation.",
		InputSchema: schema, Source: "skill", ReadOnly: true,
	}
}

func (t *loadTool) Call(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	name, err := skillArg(inv.Arguments)
	if err != nil {
		return orchestrator.ErrorResult(err.Error()), nil
	}
	for _, sk := range t.avail {
		if sk.Canonical() != name {
			continue
		}
		msg := fmt.Sprintf("Skill %q is loaded: its instructions are in the system prompt from your next step on, for %d turns.",
			name, t.set.opts.RetentionTurns)
		if t.set.runnable(sk) {
			msg += fmt.Sprintf(" Its script is the tool %q.", name)
		}
		return &orchestrator.ToolResult{Content: msg, Data: map[string]string{"skill": name}}, nil
	}
	names := make([]string, len(t.avail))
	for i, sk := range t.avail {
		names[i] = sk.Canonical()
	}
	return orchestrator.ErrorResult(fmt.Sprintf("no skill %q here; the skills are: %s", name, strings.Join(names, ", "))), nil
}

// skillTool is a skill as a tool: it runs the entry script.
type skillTool struct {
	set *Set
	sk  *Skill
}

func (t *skillTool) Spec() orchestrator.ToolSpec {
	name, desc := t.sk.Canonical(), t.sk.Description
	if t.set.runnable(t.sk) {
		desc = "Run the script of the skill " + name + " (load it first): " + desc
	} else {
		desc = "Skill " + name + " (instructions only; load it with load_skill): " + desc
	}
	return orchestrator.ToolSpec{Name: name, Description: desc, InputSchema: t.sk.Inputs, Source: orchestrator.SourceSkill, Owner: t.sk.Owner}
}

func (t *skillTool) Call(ctx context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	name := t.sk.Canonical()
	if t.sk.Entry == "" {
		return orchestrator.ErrorResult(fmt.Sprintf("skill %q has no script; load it with load_skill and follow its instructions", name)), nil
	}
	if !t.set.runnable(t.sk) {
		return orchestrator.ErrorResult(fmt.Sprintf("skill %q is instructions only here: scripts of users' skills do not run (skills.allow_user_code is off)", name)), nil
	}
	var payload map[string]any
	if err := json.Unmarshal(inv.Arguments, &payload); err != nil || payload == nil {
		return orchestrator.ErrorResult(fmt.Sprintf("the arguments of %s must be a JSON object", name)), nil
	}
	if msg := checkRequired(t.sk.Inputs, payload); msg != "" {
		return orchestrator.ErrorResult(msg), nil
	}
	return t.set.runEntry(ctx, t.sk, inv)
}

// checkRequired reports required inputs that are missing or of the wrong
// basic type ("" when fine); the script checks the rest.
func checkRequired(schema json.RawMessage, payload map[string]any) string {
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	for _, r := range s.Required {
		v, ok := payload[r]
		if !ok {
			return fmt.Sprintf("missing required input %q", r)
		}
		if want := s.Properties[r].Type; want != "" && !hasType(v, want) {
			return fmt.Sprintf("input %q must be of type %s", r, want)
		}
	}
	return ""
}

func hasType(v any, want string) bool {
	switch v := v.(type) {
	case string:
		return want == "string"
	case float64:
		// JSON has one number type; an integer is a whole one (3 or 3.0).
		return want == "number" || (want == "integer" && v == math.Trunc(v) && !math.IsInf(v, 0))
	case bool:
		return want == "boolean"
	case []any:
		return want == "array"
	case map[string]any:
		return want == "object"
	case nil:
		return want == "null"
	}
	return false
}

// promptText holds the skills section in one language.
type promptText struct{ head, intro, loadedHead string }

var promptTexts = map[string]promptText{
	"en": {"## Skills", "Skills are instructions for particular tasks. When the task matches a skill's description, " +
		"call load_skill with its name before you start; its instructions then appear below.", "### Loaded skill: "},
	"zh": {"## 技能", "技能是针对特定任务的说明。当任务符合某个技能的描述时，请先调用 load_skill（加载技能）并传入其名称；其说明随后会出现在下方。", "### 已加载技能："},
}

// renderSkills is the skills section of the system prompt; notes, by
// skill, say what a loaded skill lacks.
func renderSkills(lang string, avail []*Skill, loaded map[string]bool, notes map[string][]string) string {
	t, ok := promptTexts[lang]
	if !ok {
		t = promptTexts["en"]
	}
	var sb strings.Builder
	sb.WriteString(t.head + "\n" + t.intro + "\n")
	for _, sk := range avail {
		fmt.Fprintf(&sb, "\n- %s: %s", sk.Canonical(), sk.Description)
	}
	for _, sk := range avail {
		if !loaded[sk.Canonical()] {
			continue
		}
		fmt.Fprintf(&sb, "\n\n%s%s\n\n%s", t.loadedHead, sk.Canonical(), sk.Body)
		for _, n := range notes[sk.Canonical()] {
			fmt.Fprintf(&sb, "\n(%s)", n)
		}
	}
	return sb.String()
}
