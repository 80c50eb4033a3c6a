package evaluation

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// CheckResult is the outcome of one check.
type CheckResult struct {
	Type   string `json:"type"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail"`
}

// Judge asks a model whether answer meets rubric for question.
type Judge func(ctx context.Context, model, rubric, question, answer string) (pass bool, reason string, err error)

// grader holds what checks read: the answer and the case's workspace.
type grader struct {
	question, answer, model string
	readFile                func(path string) ([]byte, error)
	judge                   Judge
}

func (g *grader) subject(ch Check) (string, string, error) {
	if ch.Path == "" {
		return g.answer, "the answer", nil
	}
	b, err := g.readFile(ch.Path)
	if err != nil {
		return "", ch.Path, err
	}
	return string(b), ch.Path, nil
}

func (g *grader) run(ctx context.Context, ch Check) CheckResult {
	res := CheckResult{Type: ch.Type}
	fail := func(format string, a ...any) CheckResult {
		res.Detail = fmt.Sprintf(format, a...)
		return res
	}
	pass := func(format string, a ...any) CheckResult {
		res.Passed, res.Detail = true, fmt.Sprintf(format, a...)
		return res
	}
	switch ch.Type {
	case "contains":
		text, what, err := g.subject(ch)
		if err != nil {
			return fail("%s: %v", what, err)
		}
		hay, needle := text, ch.Value
		if ch.IgnoreCase {
			hay, needle = strings.ToLower(hay), strings.ToLower(needle)
		}
		if strings.Contains(hay, needle) {
			return pass("%s contains %q", what, ch.Value)
		}
		return fail("%s does not contain %q", what, ch.Value)
	case "regex":
		text, what, err := g.subject(ch)
		if err != nil {
			return fail("%s: %v", what, err)
		}
		if regexp.MustCompile(ch.Value).MatchString(text) {
			return pass("%s matches %s", what, ch.Value)
		}
		return fail("%s does not match %s", what, ch.Value)
	case "file_exists":
		b, err := g.readFile(ch.Path)
		if err != nil {
			return fail("%s: %v", ch.Path, err)
		}
		if ch.Contains != "" && !strings.Contains(string(b), ch.Contains) {
			return fail("%s exists but does not contain %q", ch.Path, ch.Contains)
		}
		return pass("%s exists", ch.Path)
	case "json_path":
		text, what, err := g.subject(ch)
		if err != nil {
			return fail("%s: %v", what, err)
		}
		var doc any
		if err := json.Unmarshal([]byte(extractJSON(text)), &doc); err != nil {
			return fail("%s is not JSON: %v", what, err)
		}
		steps, _ := parsePath(ch.Query)
		v, ok := walk(doc, steps)
		if !ok {
			return fail("%s has nothing at %s", what, ch.Query)
		}
		if ch.Equals != nil && !jsonEqual(v, ch.Equals) {
			got, _ := json.Marshal(v)
			want, _ := json.Marshal(ch.Equals)
			return fail("%s at %s is %s, want %s", what, ch.Query, got, want)
		}
		return pass("%s has %s", what, ch.Query)
	case "judge":
		if g.judge == nil {
			return fail("no judge model is configured")
		}
		ok, reason, err := g.judge(ctx, g.model, ch.Rubric, g.question, g.answer)
		if err != nil {
			return fail("judge: %v", err)
		}
		res.Passed, res.Detail = ok, reason
		return res
	}
	return fail("unknown check %q", ch.Type)
}

// extractJSON returns text, or the body of its first ``` fence when it
// has one (models like to fence JSON).
func extractJSON(text string) string {
	t := strings.TrimSpace(text)
	if i := strings.Index(t, "```"); i >= 0 {
		rest := t[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		}
		if j := strings.Index(rest, "```"); j >= 0 {
			return rest[:j]
		}
	}
	return t
}

// step is one step of a JSON path: a key, or an index when key is "".
type step struct {
	key   string
	index int
}

// parsePath parses "$.a.b[0].c" (the "$" and the first "." optional).
func parsePath(q string) ([]step, error) {
	q = strings.TrimPrefix(strings.TrimPrefix(q, "$"), ".")
	if q == "" {
		return nil, nil
	}
	var out []step
	for part := range strings.SplitSeq(q, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key == "" && rest == "" {
			return nil, fmt.Errorf("empty step in %q", q)
		}
		if key != "" {
			out = append(out, step{key: key})
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(idx)
			if !ok || err != nil || n < 0 {
				return nil, fmt.Errorf("bad index in %q", part)
			}
			out = append(out, step{index: n})
			rest = strings.TrimPrefix(after, "[")
			if after != "" && !strings.HasPrefix(after, "[") {
				return nil, fmt.Errorf("bad step %q", part)
			}
		}
	}
	return out, nil
}

func walk(v any, steps []step) (any, bool) {
	for _, s := range steps {
		switch x := v.(type) {
		case map[string]any:
			if s.key == "" {
				return nil, false
			}
			var ok bool
			if v, ok = x[s.key]; !ok {
				return nil, false
			}
		case []any:
			if s.key != "" || s.index >= len(x) {
				return nil, false
			}
			v = x[s.index]
		default:
			return nil, false
		}
	}
	return v, true
}

// jsonEqual compares a decoded JSON value with a YAML-decoded one through
// their JSON forms.
func jsonEqual(a, b any) bool {
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var x, y any
	_ = json.Unmarshal(ab, &x)
	_ = json.Unmarshal(bb, &y)
	return reflect.DeepEqual(x, y)
}
