package main

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/orchestrator"
)

// approvalPolicy is the orchestrator's view of the approvals section.
func approvalPolicy(a config.Approvals) orchestrator.ApprovalPolicy {
	return orchestrator.ApprovalPolicy{Tools: a.Tools, AllTools: a.AllTools, Mode: a.Mode, Timeout: a.Timeout(), OnTimeout: a.OnTimeout}
}

// questionPolicy is the orchestrator's view of the questions section.
func questionPolicy(q config.Questions) orchestrator.QuestionPolicy {
	return orchestrator.QuestionPolicy{Timeout: q.Timeout(), OnTimeout: q.OnTimeout, DefaultAnswer: q.DefaultAnswer}
}

// schemaValidator checks edited arguments against a tool's input schema
// with github.com/google/jsonschema-go, the library the MCP SDK uses.
type schemaValidator struct{}

func (schemaValidator) Validate(schema, value json.RawMessage) error {
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil // a schema the library cannot read is not the person's fault
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(value, &v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return rs.Validate(v)
}
