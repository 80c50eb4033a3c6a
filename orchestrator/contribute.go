package orchestrator

import (
	"context"
	"encoding/json"
	"sync"
)

// PromptContributor is implemented by a [Toolset] that adds to the system
// prompt of a run and adjusts the tools offered, model call by model call,
// from the session's history. The skills toolset is one: it lists skill
// summaries, puts the bodies of loaded skills into the prompt and offers a
// loaded skill's entry script as a tool.
//
// The loop asks every contributor before each model call (and the prompt
// preview asks once, with no history). A contribution must depend only on
// its input: the prompt cache keys on the text it returns.
type PromptContributor interface {
	ContributePrompt(ctx context.Context, in PromptContext) (Contribution, error)
}

// PromptContext is what a [PromptContributor] sees of a run.
type PromptContext struct {
	UserID    string
	SessionID string
	Language  string
	// Selected are the canonical names of the tools the run selected
	// (its tool_names resolved, plus the always-on tools).
	Selected []string
	// Preload is the request's preload_skills.
	Preload []string
	// Turn is the index of the current turn (one user question each) in
	// the history the run sees, counting from 0.
	Turn int
	// Calls are the tool calls in that history, oldest first, with the
	// turn each belongs to.
	Calls []PastCall
	// Lookup finds a tool by name (canonical, alias or wire form) in the
	// user's whole catalog, their tool rule applied: what a run of this
	// user could select. Skills use it for the tools they bring. nil when
	// the caller offers none (a PromptContext built by hand).
	Lookup func(name string) (Tool, bool)
}

// PastCall is a tool call found in a session's history.
type PastCall struct {
	Turn int
	// Name is canonical where the registry knows the tool.
	Name      string
	Arguments json.RawMessage
}

// Contribution is a [PromptContributor]'s part of one model call.
type Contribution struct {
	// Prompt is appended to the system prompt as a section of its own.
	Prompt string
	// Tools are offered for this call besides the selection; one with the
	// canonical name of a selected tool replaces it.
	Tools []Tool
	// Hide names selected tools not offered for this call.
	Hide []string
}

// contribute asks every contributor for its part of a model call: the
// prompt sections (in toolset order) and the selection the call offers.
// A failing contributor is logged and left out.
func (r *Registry) contribute(ctx context.Context, base *Selection, in PromptContext) ([]string, *Selection) {
	var texts, hide []string
	var add []Tool
	for _, ts := range r.toolsets {
		pc, ok := ts.(PromptContributor)
		if !ok {
			continue
		}
		c, err := pc.ContributePrompt(ctx, in)
		if err != nil {
			r.log.WarnContext(ctx, "prompt contribution unavailable", "toolset", ts.Name(), "err", err)
			continue
		}
		if c.Prompt != "" {
			texts = append(texts, c.Prompt)
		}
		add = append(add, c.Tools...)
		hide = append(hide, c.Hide...)
	}
	if len(add) == 0 && len(hide) == 0 {
		return texts, base
	}
	sel := newSelection(r)
	for _, t := range add {
		sel.add(t)
	}
	hidden := map[string]bool{}
	for _, h := range hide {
		hidden[h] = true
	}
	for _, name := range base.order {
		if !hidden[name] {
			sel.add(base.tools[name])
		}
	}
	return texts, sel
}

// catalogLookup returns a [PromptContext.Lookup] over the user's catalog,
// read on first use and then kept for this one prompt. Safe for concurrent
// use.
func (r *Registry) catalogLookup(ctx context.Context, userID string) func(string) (Tool, bool) {
	all := sync.OnceValue(func() *Selection {
		sel, err := r.all(ctx, userID)
		if err != nil {
			r.log.WarnContext(ctx, "catalog unavailable to a prompt contribution", "user_id", userID, "err", err)
			return newSelection(r)
		}
		return sel
	})
	return func(name string) (Tool, bool) { return all().Lookup(name) }
}

// pastCalls reads the tool calls out of history (function-call turns from
// their ToolCalls, tool_call turns from their text) and numbers the turns:
// a turn begins at each run's first message.
func pastCalls(history []Message, sel *Selection) (calls []PastCall, turn int) {
	turn = -1
	lastRun := ""
	for _, m := range history {
		switch {
		case m.Role == RoleSystem:
			continue
		case m.RunID != "" && m.RunID != lastRun:
			turn++
			lastRun = m.RunID
		case m.RunID == "" && m.Role == RoleUser && m.Name == "":
			turn++
			lastRun = ""
		}
		if m.Role != RoleAssistant {
			continue
		}
		found := m.ToolCalls
		if len(found) == 0 {
			tcs, _ := parseTextToolCalls(m.Content)
			for _, tc := range tcs {
				if tc.err == "" {
					found = append(found, tc.call)
				}
			}
		}
		for _, c := range found {
			name := sel.reg.CanonicalName(c.Name)
			if t, ok := sel.Lookup(c.Name); ok {
				name = t.Spec().Name
			}
			calls = append(calls, PastCall{Turn: max(turn, 0), Name: name, Arguments: c.Arguments})
		}
	}
	return calls, max(turn, 0)
}

// promptSelection builds the system prompt of the next model call and the
// selection it offers, from the messages the call will see.
func (o *Orchestrator) promptSelection(ctx context.Context, p promptParams, msgs []Message) (string, *Selection) {
	calls, turn := pastCalls(msgs, p.sel)
	in := PromptContext{UserID: p.userID, SessionID: p.sessionID, Language: p.lang, Selected: p.sel.Names(),
		Preload: p.preload, Turn: turn, Calls: calls, Lookup: o.tools.catalogLookup(ctx, p.userID)}
	extra, sel := o.tools.contribute(ctx, p.sel, in)
	return o.prompts.build(promptInput{Language: p.lang, Mode: p.mode, Tools: sel.Specs(), Workspace: p.workspace,
		WireSep: o.tools.Separator(), Extra: extra, Memory: p.memory}), sel
}

// promptParams are the parts of a system prompt fixed for a whole run.
type promptParams struct {
	userID, sessionID, lang, mode, workspace string
	// memory is the [Long-term Memory] block, read once per run.
	memory  string
	preload []string
	sel     *Selection
}

// workspaceSummary is the workspace part of the prompt, "" when unknown.
func (o *Orchestrator) workspaceSummary(ctx context.Context, userID string) string {
	if o.opts.Workspace == nil {
		return ""
	}
	s, err := o.opts.Workspace.Summary(ctx, userID)
	if err != nil {
		o.log.WarnContext(ctx, "workspace summary unavailable", "user_id", userID, "err", err)
	}
	return s
}
