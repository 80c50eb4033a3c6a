package mcpserver

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Task shapes go-sdk's types lack, written by patching its JSON.

// tasksInitialize is a 2025-11-25 InitializeResult with capabilities.tasks
// (go-sdk's ServerCapabilities has no such field).
type tasksInitialize struct{ *mcp.InitializeResult }

func (t *tasksInitialize) MarshalJSON() ([]byte, error) {
	return patchJSON(t.InitializeResult, func(m map[string]json.RawMessage) error {
		var caps map[string]json.RawMessage
		if err := json.Unmarshal(m["capabilities"], &caps); err != nil {
			return err
		}
		caps["tasks"] = json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)
		b, err := json.Marshal(caps)
		m["capabilities"] = b
		return err
	})
}

// tasksToolList is a 2025-11-25 tools/list page whose wunder@run says
// execution.taskSupport optional (go-sdk's Tool has no such field).
type tasksToolList struct {
	*mcp.ListToolsResult
	run string
}

func (t *tasksToolList) MarshalJSON() ([]byte, error) {
	return patchJSON(t.ListToolsResult, func(m map[string]json.RawMessage) error {
		var tools []map[string]json.RawMessage
		if err := json.Unmarshal(m["tools"], &tools); err != nil {
			return err
		}
		for _, tool := range tools {
			var name string
			if json.Unmarshal(tool["name"], &name) == nil && name == t.run {
				tool["execution"] = json.RawMessage(`{"taskSupport":"optional"}`)
			}
		}
		b, err := json.Marshal(tools)
		m["tools"] = b
		return err
	})
}

// patchJSON marshals v as an object and has patch change its members.
func patchJSON(v any, patch func(map[string]json.RawMessage) error) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if err := patch(m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}
