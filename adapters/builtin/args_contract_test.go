package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// schemaOf is the part of a tool's input schema the contract below reads.
type schemaOf struct {
	Properties map[string]struct {
		Type string `json:"type"`
	} `json:"properties"`
	Required []string `json:"required"`
}

// wrongValue is a JSON value of another type than want.
func wrongValue(want string) string {
	switch want {
	case "string":
		return "5"
	case "integer", "number":
		return `"five"`
	case "boolean":
		return `"yes"`
	case "array":
		return `{"a":1}`
	case "object":
		return `[1]`
	}
	return ""
}

// Every built-in tool, whatever its arguments, answers bad ones with an
// error result the model can read — never a Go error, never a panic — and
// the result names what is wrong: a missing required field, a field of
// the wrong type (the type its schema declares), arguments that are no
// JSON object. The catalog is read from the Set, so a new tool is held to
// this too.
func TestEveryToolRefusesBadArguments(t *testing.T) {
	s := newTestSet(t, Options{})
	dir := workspaceDir(t, s)
	writeTree(t, dir, map[string]string{"a.txt": "alpha\n"})
	ctx := context.Background()
	// Nothing refused changed the workspace.
	defer func() {
		if got := readFile(t, dir+"/a.txt"); got != "alpha\n" {
			t.Errorf("a.txt after refused calls = %q", got)
		}
	}()
	tools, err := s.Tools(ctx, testUser)
	if err != nil {
		t.Fatal(err)
	}
	call := func(tool orchestrator.Tool, args string) *orchestrator.ToolResult {
		t.Helper()
		res, err := tool.Call(ctx, &orchestrator.ToolInvocation{UserID: testUser, CallID: "c", Arguments: json.RawMessage(args), Output: func(string, string) {}})
		if err != nil {
			t.Fatalf("%s(%s): a Go error: %v", tool.Spec().Name, args, err)
		}
		if res == nil {
			t.Fatalf("%s(%s): no result", tool.Spec().Name, args)
		}
		return res
	}
	for _, tool := range tools {
		spec := tool.Spec()
		t.Run(spec.Name, func(t *testing.T) {
			var sc schemaOf
			if err := json.Unmarshal(spec.InputSchema, &sc); err != nil {
				t.Fatalf("input schema: %v", err)
			}
			for _, args := range []string{`[]`, `5`, `"text"`, `{"a":`, `true`} {
				if res := call(tool, args); !res.IsError || !strings.Contains(res.Content, "invalid arguments") {
					t.Errorf("arguments %s: %+v; want an error result saying they are invalid", args, res)
				}
			}
			if len(sc.Required) > 0 {
				if res := call(tool, `{}`); !res.IsError || !strings.Contains(res.Content, fmt.Sprintf("%q is required", sc.Required[0])) {
					t.Errorf("no arguments: %+v; want an error result naming %q", res, sc.Required[0])
				}
				nulls := map[string]any{}
				for _, r := range sc.Required {
					nulls[r] = nil
				}
				b, _ := json.Marshal(nulls)
				if res := call(tool, string(b)); !res.IsError || !strings.Contains(res.Content, "is required") {
					t.Errorf("required fields null: %+v; want them refused as missing", res)
				}
			}
			names := make([]string, 0, len(sc.Properties))
			for n := range sc.Properties {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, name := range names {
				wrong := wrongValue(sc.Properties[name].Type)
				if wrong == "" {
					continue
				}
				// The required fields present and right, so the one wrong
				// field is what the result is about.
				fields := []string{fmt.Sprintf("%q:%s", name, wrong)}
				for _, r := range sc.Required {
					if r != name {
						fields = append(fields, fmt.Sprintf("%q:%s", r, rightValue(sc.Properties[r].Type)))
					}
				}
				slices.Sort(fields)
				args := "{" + strings.Join(fields, ",") + "}"
				res := call(tool, args)
				if !res.IsError || !strings.Contains(res.Content, fmt.Sprintf("%q", name)) {
					t.Errorf("%s: %+v; want an error result naming %q", args, res, name)
				}
			}
		})
	}
}

// rightValue is a JSON value of type want that the tools accept as a
// required argument here.
func rightValue(want string) string {
	switch want {
	case "integer", "number":
		return "1"
	case "boolean":
		return "false"
	case "array":
		return "[]"
	case "object":
		return "{}"
	}
	return `"a.txt"`
}

// Arguments a model sends as a JSON string holding the object are read
// as that object, once; a string holding a string is not.
func TestArgumentsAsAString(t *testing.T) {
	s := newTestSet(t, Options{})
	writeTree(t, workspaceDir(t, s), map[string]string{"a.txt": "alpha\n"})
	wantOK(t, callTool(t, s, "read_file", `"{\"path\":\"a.txt\"}"`), "alpha")
	wantErr(t, callTool(t, s, "read_file", `"\"{\\\"path\\\":\\\"a.txt\\\"}\""`), "want a JSON object")
	// Empty and null arguments are {}: a tool with nothing required runs.
	for _, args := range []string{``, `null`, `  `} {
		res, err := callToolCtx(context.Background(), t, s, "list_files", json.RawMessage(args), nil)
		if err != nil || res.IsError {
			t.Errorf("list_files(%q) = %+v, %v; want a listing", args, res, err)
		}
	}
}
