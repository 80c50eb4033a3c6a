package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/orchestrator"
)

// TestModel implements gateway.ModelTester: one real chat call with the
// configured model name, or with settings not saved yet (an llm.models
// entry; the configured model's api_key when they leave it out, since
// the console shows keys masked: the mask sent back keeps it too).
func (ca *configAdmin) TestModel(ctx context.Context, name string, settings map[string]any) (any, error) {
	cur := ca.cur.Load()
	stored, known := cur.LLM.Models[name]
	if name != "" && !known && settings == nil {
		return nil, fmt.Errorf("%w: no model %q in llm.models", orchestrator.ErrNotFound, name)
	}
	m := stored
	if settings != nil {
		m = config.NewModel()
		raw, _ := json.Marshal(settings)
		dec := yaml.NewDecoder(bytes.NewReader(raw)) // JSON is YAML: the entry's yaml keys
		dec.KnownFields(true)
		if err := dec.Decode(&m); err != nil {
			return nil, &gateway.ConfigError{Fields: []gateway.ConfigFieldError{{Key: "model", Message: err.Error()}}}
		}
		if key, given := settings["api_key"]; (!given || key == config.Mask) && known {
			m.APIKey = stored.APIKey
		}
	}
	if name == "" {
		name = m.Model
	}
	return llm.TestConnection(ctx, llm.Config{Name: name, Provider: m.Provider, BaseURL: m.BaseURL, APIKey: m.APIKey,
		Model: m.Model, Script: m.Script}), nil
}

var _ gateway.ModelTester = (*configAdmin)(nil)
