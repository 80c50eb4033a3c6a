package orchestrator

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

// promptText holds one language's system prompt pieces.
type promptText struct {
	intro, toolsHead, textProtocol, functionProtocol, noTools, toolListHead, schemaLabel, workspaceHead, workspaceIntro, emptyWorkspace string
}

var promptTexts = map[string]promptText{
	"en": {
		intro: "You are wunder, an agent that completes the user's task step by step, calling tools when they help. " +
			"Answer in the language the user writes in. Be accurate; never invent tool results.",
		toolsHead: "## Tools",
		textProtocol: "To call a tool, write one block per call, exactly like this:\n" +
			"<tool_call>\n{\"name\": \"<tool name>\", \"arguments\": {<arguments as a JSON object>}}\n</tool_call>\n" +
			"You may write several blocks in one reply to call independent tools; they run in parallel. " +
			"After your calls, stop and wait: the results come back in a message whose lines start with \"tool_response: \". " +
			"When the task is done, call final_response with your answer, or reply without any tool call.",
		functionProtocol: "Call the provided functions when they help; independent calls in one reply run in parallel. " +
			"When the task is done, call final_response with your answer, or reply without calling a function.",
		noTools:        "No tools are available for this task: answer directly.",
		toolListHead:   "Available tools:",
		schemaLabel:    "arguments (JSON Schema)",
		workspaceHead:  "## Workspace",
		workspaceIntro: "You have a private, persistent workspace. File paths in tool arguments are relative to it.",
		emptyWorkspace: "The workspace is empty.",
	},
	"zh": {
		intro:     "你是 wunder，一个逐步完成用户任务的智能体，在有帮助时调用工具。请使用用户所用的语言回答。务必准确，绝不编造工具结果。",
		toolsHead: "## 工具",
		textProtocol: "调用工具时，每次调用写一个代码块，格式严格如下：\n" +
			"<tool_call>\n{\"name\": \"<工具名>\", \"arguments\": {<JSON 对象形式的参数>}}\n</tool_call>\n" +
			"一次回复中可以写多个代码块来调用相互独立的工具，它们会并行执行。写完调用后停止并等待：结果会以每行以 \"tool_response: \" 开头的消息返回。" +
			"任务完成后，调用 final_response（最终回复）给出答案，或直接回复而不调用工具。",
		functionProtocol: "在有帮助时调用所提供的函数；同一回复中的独立调用会并行执行。任务完成后，调用 final_response（最终回复）给出答案，或直接回复而不调用函数。",
		noTools:          "本任务没有可用工具：请直接回答。",
		toolListHead:     "可用工具：",
		schemaLabel:      "参数（JSON Schema）",
		workspaceHead:    "## 工作区",
		workspaceIntro:   "你有一个私有的持久化工作区。工具参数中的文件路径都相对于该工作区。",
		emptyWorkspace:   "工作区为空。",
	},
}

// promptInput is everything the system prompt depends on; it is the cache key.
type promptInput struct {
	Language  string
	Mode      string
	Tools     []ToolSpec
	Workspace string
	WireSep   string
	// Extra are the toolsets' contributions ([PromptContributor]).
	Extra []string
	// Memory is the [Long-term Memory] block ("" = none).
	Memory string
}

// key is the SHA-256 of every field of in (and of each tool spec), each
// with its length, so no two inputs share one. It was the JSON of in,
// which cost a run more than the hash. TestPromptKeyCoversEveryField
// fails when a field is added here without being hashed.
func (in *promptInput) key() string {
	h := sha256.New()
	var n [8]byte
	num := func(v int) {
		binary.LittleEndian.PutUint64(n[:], uint64(v))
		h.Write(n[:])
	}
	blob := func(b []byte) { num(len(b)); h.Write(b) }
	str := func(s string) { num(len(s)); io.WriteString(h, s) }
	flag := func(b bool) {
		if b {
			num(1)
		} else {
			num(0)
		}
	}
	str(in.Language)
	str(in.Mode)
	str(in.Workspace)
	str(in.WireSep)
	str(in.Memory)
	num(len(in.Extra))
	for _, e := range in.Extra {
		str(e)
	}
	num(len(in.Tools))
	for i := range in.Tools {
		t := &in.Tools[i]
		str(t.Name)
		num(len(t.Aliases))
		for _, a := range t.Aliases {
			str(a)
		}
		str(t.Description)
		blob(t.InputSchema)
		str(t.Source)
		str(t.Owner)
		flag(t.ReadOnly)
		flag(t.EditsFiles)
		flag(t.AlwaysOn)
		flag(t.RunOnly)
		flag(t.AppOnly)
		// Meta is not rendered into a prompt: front-ends' metadata.
	}
	var sum [sha256.Size]byte
	return string(h.Sum(sum[:0]))
}

// promptBuilder renders system prompts, caching them by their inputs.
type promptBuilder struct {
	// mu guards the LRU below.
	mu    sync.Mutex
	cap   int
	order *list.List // of string keys, most recent first
	items map[string]*list.Element
	texts map[string]string
}

func newPromptBuilder(capacity int) *promptBuilder {
	return &promptBuilder{cap: capacity, order: list.New(), items: map[string]*list.Element{}, texts: map[string]string{}}
}

func (b *promptBuilder) build(in promptInput) string {
	key := in.key()
	b.mu.Lock()
	if e, ok := b.items[key]; ok {
		b.order.MoveToFront(e)
		s := b.texts[key]
		b.mu.Unlock()
		return s
	}
	b.mu.Unlock()

	s := renderPrompt(in)

	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.items[key]; !ok {
		b.items[key] = b.order.PushFront(key)
		b.texts[key] = s
		for b.order.Len() > b.cap {
			last := b.order.Back()
			b.order.Remove(last)
			delete(b.items, last.Value.(string))
			delete(b.texts, last.Value.(string))
		}
	}
	return s
}

// cached reports the number of cached prompts (for tests).
func (b *promptBuilder) cached() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.order.Len()
}

func renderPrompt(in promptInput) string {
	t, ok := promptTexts[in.Language]
	if !ok {
		t = promptTexts["en"]
	}
	var sb strings.Builder
	sb.WriteString(t.intro)
	sb.WriteString("\n\n")
	sb.WriteString(t.toolsHead)
	sb.WriteString("\n")
	switch {
	case len(in.Tools) == 0:
		sb.WriteString(t.noTools)
	case in.Mode == ModeFunctionCall:
		// The tool list travels in the request's tools field.
		sb.WriteString(t.functionProtocol)
	default:
		sb.WriteString(t.textProtocol)
		sb.WriteString("\n\n")
		sb.WriteString(t.toolListHead)
		for _, spec := range in.Tools {
			fmt.Fprintf(&sb, "\n- %s", spec.Name)
			if len(spec.Aliases) > 0 {
				fmt.Fprintf(&sb, " (%s)", strings.Join(spec.Aliases, ", "))
			}
			fmt.Fprintf(&sb, ": %s\n  %s: %s", oneLine(spec.Description), t.schemaLabel, compactJSON(spec.InputSchema))
		}
	}
	for _, e := range in.Extra {
		sb.WriteString("\n\n")
		sb.WriteString(strings.TrimSpace(e))
	}
	if in.Memory != "" {
		sb.WriteString("\n\n")
		sb.WriteString(in.Memory)
	}
	sb.WriteString("\n\n")
	sb.WriteString(t.workspaceHead)
	sb.WriteString("\n")
	sb.WriteString(t.workspaceIntro)
	sb.WriteString("\n")
	if strings.TrimSpace(in.Workspace) == "" {
		sb.WriteString(t.emptyWorkspace)
	} else {
		sb.WriteString(in.Workspace)
	}
	return sb.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

// PromptRequest asks for a system prompt preview.
type PromptRequest struct {
	UserID       string
	ToolNames    []string
	ModelName    string
	ToolCallMode string
	Language     string
	// PreloadSkills are loaded from the start, as a run's would be.
	PreloadSkills []string
}

// SystemPrompt renders the system prompt a run with these parameters would
// get (POST /wunder/system_prompt).
func (o *Orchestrator) SystemPrompt(ctx context.Context, req PromptRequest) (string, error) {
	probe := RunRequest{UserID: req.UserID, Question: "-", ToolCallMode: req.ToolCallMode, Language: req.Language}
	if err := o.validate(&probe); err != nil {
		return "", err
	}
	mode := req.ToolCallMode
	if mode == "" {
		if _, settings, err := o.models.Lookup(req.ModelName); err == nil {
			mode = settings.ToolCallMode
		}
	}
	sel, err := o.tools.Select(ctx, req.UserID, req.ToolNames, nil)
	if err != nil {
		return "", err
	}
	lang := firstNonEmpty(req.Language, o.defaultLanguage())
	memory, _ := o.memoryBlock(ctx, req.UserID, lang)
	p := promptParams{userID: req.UserID, lang: lang, mode: firstNonEmpty(mode, ModeToolCall),
		workspace: o.workspaceSummary(ctx, req.UserID), memory: memory,
		preload: req.PreloadSkills, sel: sel}
	prompt, _ := o.promptSelection(ctx, p, nil)
	return prompt, nil
}
