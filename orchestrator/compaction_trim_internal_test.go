package orchestrator

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// trimToolResults stubs the long results and arguments of completed
// steps, in both modes, leaves the latest round and short results as
// they are, never trims a stub again, and does not change its input.
func TestTrimToolResults(t *testing.T) {
	long := strings.Repeat("r", 300)
	longArgs := json.RawMessage(`{"content":"` + strings.Repeat("a", 600) + `"}`)
	textLine := func(name, content string, ok bool) string {
		return renderTextResult(name, &ToolResult{Content: content, IsError: !ok})
	}
	msgs := []Message{
		{Role: RoleUser, Content: "q"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "write_file", Arguments: longArgs}, {ID: "c2", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)}}},
		{Role: RoleTool, Name: "write_file", Content: long},
		{Role: RoleTool, Name: "read_file", Content: "short"},
		{Role: RoleUser, Content: textLine("fetch", long, false) + "\n" + textLine("read_file", "short", true)},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c3", Name: "read_file", Arguments: longArgs}}},
		{Role: RoleTool, Name: "read_file", Content: long}, // the latest round: kept
	}
	keepFrom := lastRoundStart(msgs)
	if keepFrom != 5 {
		t.Fatalf("lastRoundStart = %d; want 5", keepFrom)
	}
	out, n := trimToolResults(msgs, keepFrom)
	if n != 2 {
		t.Errorf("trimmed %d results; want 2 (one per mode)", n)
	}
	if got := out[2].Content; got != "[tool result trimmed: write_file, 300 chars]" {
		t.Errorf("function_call result = %q", got)
	}
	if out[3].Content != "short" {
		t.Errorf("a short result was trimmed: %q", out[3].Content)
	}
	var args map[string]string
	if err := json.Unmarshal(out[1].ToolCalls[0].Arguments, &args); err != nil || !strings.Contains(args["trimmed"], "bytes of arguments") {
		t.Errorf("long arguments = %s", out[1].ToolCalls[0].Arguments)
	}
	if string(out[1].ToolCalls[1].Arguments) != `{"path":"a"}` {
		t.Errorf("short arguments were trimmed: %s", out[1].ToolCalls[1].Arguments)
	}
	lines := strings.Split(out[4].Content, "\n")
	var first struct {
		Name    string `json:"name"`
		OK      bool   `json:"ok"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[0], toolResponseHead)), &first); err != nil ||
		first.Name != "fetch" || first.OK || first.Content != "[tool result trimmed: fetch, 300 chars]" {
		t.Errorf("tool_call result line = %q (%v); want a stub that keeps the failure", lines[0], err)
	}
	if lines[1] != textLine("read_file", "short", true) {
		t.Errorf("a short tool_call result was changed: %q", lines[1])
	}
	if out[6].Content != long || string(out[5].ToolCalls[0].Arguments) != string(longArgs) {
		t.Error("the latest round, which the model has not read yet, was trimmed")
	}
	// The input is unchanged, and trimming again trims nothing.
	if msgs[2].Content != long || string(msgs[1].ToolCalls[0].Arguments) != string(longArgs) || !strings.Contains(msgs[4].Content, long) {
		t.Error("trimToolResults changed its input")
	}
	if _, again := trimToolResults(out, keepFrom); again != 0 {
		t.Errorf("a second trim trimmed %d stubs", again)
	}
	if _, none := trimToolResults(msgs, 0); none != 0 {
		t.Errorf("keepFrom 0 trimmed %d", none)
	}
	if got := lastRoundStart([]Message{{Role: RoleUser}}); got != 1 {
		t.Errorf("lastRoundStart without an assistant = %d; want len", got)
	}
}

// clipTokensFront keeps the newest part of a transcript that fits: the
// longest suffix within n tokens, on a rune boundary.
func TestClipTokensFront(t *testing.T) {
	for _, s := range []string{
		strings.Repeat("abcd", 100),
		strings.Repeat("中文", 100),
		"older part 旧的 " + strings.Repeat("newer ", 50),
	} {
		for _, n := range []int{0, 1, 7, 50} {
			got := clipTokensFront(s, n)
			if !utf8.ValidString(got) || !strings.HasSuffix(s, got) {
				t.Fatalf("clipTokensFront(%.12q…, %d) = %q is not a suffix", s, n, got)
			}
			if tok := textTokens(got); tok > n {
				t.Errorf("clipTokensFront(%.12q…, %d) costs %d tokens", s, n, tok)
			}
			// One rune more would not fit: it is the longest such suffix.
			if len(got) < len(s) {
				_, size := utf8.DecodeLastRuneInString(s[:len(s)-len(got)])
				if longer := s[len(s)-len(got)-size:]; textTokens(longer) <= n {
					t.Errorf("clipTokensFront(%.12q…, %d) = %d bytes; %q fits too", s, n, len(got), longer[:size])
				}
			}
		}
		if got := clipTokensFront(s, 10_000); got != s {
			t.Errorf("a transcript that fits was cut")
		}
	}
}
