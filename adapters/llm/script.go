package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Script is what a [Scripted] model answers: one [Turn] per model call of a
// run. A script file is YAML or JSON, either a mapping with a "turns" list
// or just the list:
//
//	turns:
//	  - reasoning: The user wants the time.
//	    content: Let me look.
//	    tool_calls:
//	      - name: current_time
//	        arguments: {zone: UTC}
//	  - content: "It is noon. You asked: {{question}}"
//	    delay_ms: 20
//	    usage: {input_tokens: 120, output_tokens: 9}
//
// Scenarios let one script play several tasks (an evaluation case set): the
// first scenario that matches the run plays its turns — its When occurs in
// the run's question, and each value of its Metadata occurs in the run's
// metadata under its key (orchestrator.ModelRequest.Metadata: what the
// front-end knew of the request, e.g. the A2A client's message id); a run
// no scenario matches plays Turns.
//
//	scenarios:
//	  - when: greeting.txt
//	    turns:
//	      - tool_calls: [{name: write_file, arguments: {path: greeting.txt, content: hello}}]
//	      - content: Done.
//	  - metadata: {wunder.a2a.message_id: tck-input-required}
//	    turns:
//	      - tool_calls: [{name: ask_user, arguments: {question: More?}}]
//	        repeat_while: more please   # asked again while the answer says so
//	      - content: Done.
type Script struct {
	Turns     []Turn     `json:"turns,omitempty" yaml:"turns,omitempty"`
	Scenarios []Scenario `json:"scenarios,omitempty" yaml:"scenarios,omitempty"`
}

// Scenario is the turns a script plays for the runs it matches: When in
// the question (if set) and every Metadata value in the run's metadata
// under its key. At least one of the two is set.
type Scenario struct {
	When     string            `json:"when,omitempty" yaml:"when,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty" yaml:"metadata,omitempty"`
	Turns    []Turn            `json:"turns" yaml:"turns"`
}

// matches reports whether sc plays the run of this question and metadata.
func (sc Scenario) matches(question string, meta map[string]string) bool {
	if !strings.Contains(question, sc.When) {
		return false
	}
	for k, v := range sc.Metadata {
		got, ok := meta[k]
		if !ok || !strings.Contains(got, v) {
			return false
		}
	}
	return true
}

// turnsFor returns the turns a run with this question and metadata plays.
func (s Script) turnsFor(question string, meta map[string]string) []Turn {
	for _, sc := range s.Scenarios {
		if sc.matches(question, meta) {
			return sc.Turns
		}
	}
	return s.Turns
}

// Turn is one scripted model answer. "{{question}}" in Content or Reasoning
// is replaced by the run's question.
type Turn struct {
	Content   string       `json:"content" yaml:"content"`
	Reasoning string       `json:"reasoning,omitempty" yaml:"reasoning,omitempty"`
	ToolCalls []ScriptCall `json:"tool_calls,omitempty" yaml:"tool_calls,omitempty"`
	// DelayMS is waited between two streamed chunks.
	DelayMS int `json:"delay_ms,omitempty" yaml:"delay_ms,omitempty"`
	// RepeatWhile plays the turn again, instead of the next one, while
	// the results of its tool calls contain this text: a question
	// (ask_user) asked until the answer changes. "" = played once.
	RepeatWhile string `json:"repeat_while,omitempty" yaml:"repeat_while,omitempty"`
	// Usage is reported as is; nil = estimated (about 4 bytes a token).
	Usage *ScriptUsage `json:"usage,omitempty" yaml:"usage,omitempty"`
}

// ScriptCall is a tool call of a scripted turn. In function_call mode Name
// must be the name the tool has on the wire (as the model would send it).
type ScriptCall struct {
	Name string `json:"name" yaml:"name"`
	// Arguments is a JSON object; nil = {}.
	Arguments map[string]any `json:"arguments,omitempty" yaml:"arguments,omitempty"`
}

// ScriptUsage is the token usage a scripted turn reports.
type ScriptUsage struct {
	InputTokens  int64 `json:"input_tokens" yaml:"input_tokens"`
	OutputTokens int64 `json:"output_tokens" yaml:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens,omitempty" yaml:"total_tokens,omitempty"`
}

// questionPlaceholder in a turn's text is replaced by the run's question.
const questionPlaceholder = "{{question}}"

// EchoScript is the built-in script for demos: a friendly fixed answer that
// quotes the question, no tool calls; for a question that mentions the
// tour, [TourTurns]; for one that mentions A2UI, [A2UITurns], and for the
// action of its form, [A2UIActionTurns].
func EchoScript() Script {
	return Script{
		Scenarios: []Scenario{
			{When: A2UIAction, Turns: A2UIActionTurns()}, // before A2UIWhen: the action may mention it
			{When: TourWhen, Turns: TourTurns()},
			{When: A2UIWhen, Turns: A2UITurns()},
		},
		Turns: []Turn{{
			Content: "Hello from wunder! This answer comes from the scripted demo model, not a real LLM " +
				"(configure llm.models to use one). Ask for \"the tour\" to see a tool call, a plan, an approval " +
				"and a question, or for \"the A2UI demo\" (with the a2ui tool picked) to see an interactive form. " +
				"You asked: " + questionPlaceholder,
		}},
	}
}

// TourWhen starts the demo's tour: a question containing it plays
// [TourTurns].
const TourWhen = "tour"

// TourTools are the tools the tour uses; a run that offers them (with
// approval mode suggest, so write_file asks) shows each step for real.
var TourTools = []string{"plan", "list_files", "write_file", "ask_user"}

// TourTurns walk a newcomer through what a run does, with real tools: a
// plan and a look at the workspace, a file written (which asks approval
// in approval mode suggest), a question to the user (ask_user), and an
// answer.
func TourTurns() []Turn {
	step := func(states ...string) map[string]any {
		titles := []string{"Look at your workspace", "Write a note (asks your approval)", "Ask you a question", "Answer"}
		steps := make([]map[string]any, len(titles))
		for i, t := range titles {
			steps[i] = map[string]any{"title": t, "status": states[i]}
		}
		return map[string]any{"steps": steps}
	}
	return []Turn{
		{Reasoning: "A tour: plan it, then show each thing a run can do.",
			Content: "Welcome to the tour. First a plan, and a look at your workspace.",
			ToolCalls: []ScriptCall{
				{Name: "plan", Arguments: step("running", "pending", "pending", "pending")},
				{Name: "list_files", Arguments: map[string]any{"path": "."}},
			}},
		{Content: "Now I write a note into your workspace. Writing changes things, so wunder asks you first.",
			ToolCalls: []ScriptCall{
				{Name: "plan", Arguments: step("completed", "running", "pending", "pending")},
				{Name: "write_file", Arguments: map[string]any{"path": "wunder-tour.md",
					"content": "# Hello from wunder\n\nThe scripted demo model wrote this file during the tour.\n"}},
			}},
		{Content: "A model can also ask you something and wait for your answer.",
			ToolCalls: []ScriptCall{
				{Name: "plan", Arguments: step("completed", "completed", "running", "pending")},
				{Name: "ask_user", Arguments: map[string]any{"question": "Which do you want to try next?",
					"options": []string{"Connect a real model", "Add an MCP server", "Call wunder over A2A"}, "free_text": true}},
			}},
		{Content: "That was the tour: a plan, a tool call, an approval and a question, each an event you can follow over " +
			"SSE, A2A, MCP or Connect. The docs folder says how to do what you picked; configure llm.models to talk to a real model."},
	}
}

// LoadScript reads a script file: JSON when the name ends in .json, YAML
// otherwise.
func LoadScript(path string) (Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Script{}, err
	}
	s, err := ParseScript(b, strings.EqualFold(filepath.Ext(path), ".json"))
	if err != nil {
		return Script{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseScript decodes a script from JSON (isJSON) or YAML and checks it.
func ParseScript(b []byte, isJSON bool) (Script, error) {
	var s Script
	trimmed := bytes.TrimSpace(b)
	list := len(trimmed) > 0 && (trimmed[0] == '[' || trimmed[0] == '-')
	var err error
	switch {
	case isJSON && list:
		err = strictJSON(b, &s.Turns)
	case isJSON:
		err = strictJSON(b, &s)
	case list:
		err = strictYAML(b, &s.Turns)
	default:
		err = strictYAML(b, &s)
	}
	if errors.Is(err, io.EOF) {
		return Script{}, fmt.Errorf("script is empty")
	}
	if err != nil {
		return Script{}, err
	}
	return s, s.Validate()
}

// Validate checks that the script has turns and that they make sense.
func (s Script) Validate() error {
	if len(s.Turns) == 0 && len(s.Scenarios) == 0 {
		return fmt.Errorf("script has no turns")
	}
	for i, sc := range s.Scenarios {
		if sc.When == "" && len(sc.Metadata) == 0 {
			return fmt.Errorf("scenarios[%d]: when or metadata is required", i)
		}
		if len(sc.Turns) == 0 {
			return fmt.Errorf("scenarios[%d].turns: required", i)
		}
		if err := validateTurns(fmt.Sprintf("scenarios[%d].", i), sc.Turns); err != nil {
			return err
		}
	}
	return validateTurns("", s.Turns)
}

func validateTurns(prefix string, turns []Turn) error {
	for i, t := range turns {
		if t.DelayMS < 0 {
			return fmt.Errorf("%sturns[%d].delay_ms: must not be negative", prefix, i)
		}
		if t.RepeatWhile != "" && len(t.ToolCalls) == 0 {
			return fmt.Errorf("%sturns[%d].repeat_while: the turn has no tool calls whose results it could read", prefix, i)
		}
		for j, c := range t.ToolCalls {
			if c.Name == "" {
				return fmt.Errorf("%sturns[%d].tool_calls[%d].name: required", prefix, i, j)
			}
			if _, err := json.Marshal(c.Arguments); err != nil {
				return fmt.Errorf("%sturns[%d].tool_calls[%d].arguments: %w", prefix, i, j, err)
			}
		}
	}
	return nil
}

func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func strictYAML(b []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	return dec.Decode(v)
}
