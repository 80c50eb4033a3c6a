package main

import (
	"context"
	"fmt"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/orchestrator"
)

// ContextWindow implements gateway.ContextWindows: without maxContext it
// asks the model's provider (its model listing) and reports what it says,
// recording nothing; with maxContext it records it as
// llm.models.<name>.max_context through UpdateConfigSection, validated
// like any change of the llm section (max_output must stay below it).
func (ca *configAdmin) ContextWindow(ctx context.Context, name string, maxContext *int) (gateway.ContextWindowResult, error) {
	cur := ca.cur.Load()
	m, ok := cur.LLM.Models[name]
	if !ok {
		return gateway.ContextWindowResult{}, fmt.Errorf("%w: no model %q in llm.models", orchestrator.ErrNotFound, name)
	}
	out := gateway.ContextWindowResult{ModelName: name, Configured: m.MaxContext}
	if maxContext == nil {
		rev, err := ca.revision(ctx)
		if err != nil {
			return out, err
		}
		out.Revision = rev
		n, err := llm.ProbeContextWindow(ctx, llm.Config{Name: name, Provider: m.Provider, BaseURL: m.BaseURL, APIKey: m.APIKey, Model: m.Model})
		switch {
		case err != nil:
			out.Source, out.Detail = "unknown", err.Error()
		case n == 0:
			out.Source, out.Detail = "unknown", "the provider's model listing reports no context length for this model; record one with max_context"
		default:
			out.Source, out.MaxContext = "provider", n
		}
		return out, nil
	}
	if *maxContext < 1 {
		return out, &gateway.ConfigError{Fields: []gateway.ConfigFieldError{{Key: "max_context", Message: fmt.Sprintf("must be at least 1, got %d", *maxContext)}}}
	}
	doc, rev, err := ca.ConfigSection(ctx, "llm")
	if err != nil {
		return out, err
	}
	section, _ := doc["llm"].(map[string]any)
	models, _ := section["models"].(map[string]any)
	entry, _ := models[name].(map[string]any)
	if entry == nil {
		return out, fmt.Errorf("%w: no model %q in llm.models", orchestrator.ErrNotFound, name)
	}
	entry["max_context"] = float64(*maxContext) // JSON-shaped, as a POSTed body is
	_, newRev, err := ca.UpdateConfigSection(ctx, "llm", doc, &rev)
	if err != nil {
		return out, err
	}
	out.Source, out.MaxContext, out.Configured, out.Revision = "recorded", *maxContext, *maxContext, newRev
	return out, nil
}

var _ gateway.ContextWindows = (*configAdmin)(nil)
