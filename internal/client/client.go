// Package client is a small Go client of wunder's HTTP API, used by the
// CLI (`wunder run`, `wunder bench`) and by end-to-end tests: submit a run,
// follow its events (reconnecting with Last-Event-ID), cancel it, list and
// decide its approvals, list tools. It is a leaf: it mirrors the wire types instead of importing the
// core, exactly as an outside client would.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Client talks to one wunder server.
type Client struct {
	baseURL string
	apiKey  string
	http    *http.Client
	// language is sent as Accept-Language ("" = none).
	language string
}

// New returns a client for baseURL (e.g. http://127.0.0.1:8000). apiKey
// may be empty. httpClient nil means a client without an overall timeout
// (streams are long).
func New(baseURL, apiKey string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	return &Client{baseURL: strings.TrimRight(baseURL, "/"), apiKey: apiKey, http: httpClient}
}

// SetLanguage makes every request ask for the server's messages (problem
// details) in lang, a language tag sent as Accept-Language (zh, zh-CN,
// en); "" sends none, and the server answers in its default language.
func (c *Client) SetLanguage(lang string) { c.language = lang }

// RunRequest is the body of POST /wunder and POST /wunder/runs.
type RunRequest struct {
	UserID       string   `json:"user_id"`
	Question     string   `json:"question"`
	ToolNames    []string `json:"tool_names,omitempty"`
	Stream       *bool    `json:"stream,omitempty"`
	SessionID    string   `json:"session_id,omitempty"`
	ModelName    string   `json:"model_name,omitempty"`
	ToolCallMode string   `json:"tool_call_mode,omitempty"`
	Language     string   `json:"language,omitempty"`
	MaxRounds    int      `json:"max_rounds,omitempty"`
	// ApprovalMode: suggest, auto_edit or full_auto ("" = the server's).
	ApprovalMode string `json:"approval_mode,omitempty"`
}

// Run is a run as the API returns it.
type Run struct {
	ID         string `json:"run_id"`
	SessionID  string `json:"session_id"`
	UserID     string `json:"user_id"`
	State      string `json:"state"`
	StopReason string `json:"stop_reason"`
	Answer     string `json:"answer"`
	Error      string `json:"error"`
	Usage      Usage  `json:"usage"`
	Last       int64  `json:"last_seq"`
}

// LastSeq is the seq of the run's last event.
func (r *Run) LastSeq() int64 { return r.Last }

// Usage counts tokens.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
}

// Event is one event of a run's log.
type Event struct {
	RunID     string          `json:"run_id"`
	SessionID string          `json:"session_id"`
	Seq       int64           `json:"seq"`
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data"`
	Time      time.Time       `json:"time"`
}

// Final is the payload of the final event.
type Final struct {
	Answer     string `json:"answer"`
	Usage      Usage  `json:"usage"`
	StopReason string `json:"stop_reason"`
	State      string `json:"state"`
	Error      string `json:"error"`
}

// Tool is one entry of the catalog.
type Tool struct {
	Name        string          `json:"name"`
	WireName    string          `json:"wire_name"`
	Aliases     []string        `json:"aliases"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Source      string          `json:"source"`
	Owner       string          `json:"owner"`
	// Group is the catalog group the server listed the tool under
	// (builtin_tools, mcp_tools, ..., user_tools, shared_tools).
	Group string `json:"-"`
}

// Error is a problem answer of the server.
type Error struct {
	Status     int    `json:"status"`
	Code       string `json:"code"`
	Detail     string `json:"detail"`
	RequestID  string `json:"request_id"`
	RetryAfter string `json:"-"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Detail)
}

// Submit starts a run (POST /wunder/runs) and returns it at once.
func (c *Client) Submit(ctx context.Context, req RunRequest) (*Run, error) {
	var run Run
	if err := c.do(ctx, http.MethodPost, "/wunder/runs", req, &run); err != nil {
		return nil, err
	}
	return &run, nil
}

// Cancel cancels a run.
func (c *Client) Cancel(ctx context.Context, userID, runID string) error {
	return c.do(ctx, http.MethodPost, "/wunder/runs/"+url.PathEscape(runID)+"/cancel?user_id="+url.QueryEscape(userID), nil, nil)
}

// GetRun returns a run.
func (c *Client) GetRun(ctx context.Context, userID, runID string) (*Run, error) {
	var run Run
	if err := c.do(ctx, http.MethodGet, "/wunder/runs/"+url.PathEscape(runID)+"?user_id="+url.QueryEscape(userID), nil, &run); err != nil {
		return nil, err
	}
	return &run, nil
}

// Tools lists the catalog of a user, group by group in the server's
// order of groups (sorted by group name), each group sorted by name.
func (c *Client) Tools(ctx context.Context, userID string) ([]Tool, error) {
	var groups map[string][]Tool
	if err := c.do(ctx, http.MethodGet, "/wunder/tools?user_id="+url.QueryEscape(userID), nil, &groups); err != nil {
		return nil, err
	}
	names := slices.Sorted(maps.Keys(groups))
	var out []Tool
	for _, g := range names {
		for _, t := range groups[g] {
			t.Group = g
			out = append(out, t)
		}
	}
	return out, nil
}

// Health calls GET /healthz.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/healthz", nil, nil)
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.auth(req.Header)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return problemOf(resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// auth sets the headers of every request: the API key and the language.
func (c *Client) auth(h http.Header) {
	if c.apiKey != "" {
		h.Set("X-API-Key", c.apiKey)
	}
	if c.language != "" {
		h.Set("Accept-Language", c.language)
	}
}

func problemOf(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &Error{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
	if err := json.Unmarshal(b, e); err != nil || e.Code == "" {
		e.Code = "http_" + fmt.Sprint(resp.StatusCode)
		e.Detail = strings.TrimSpace(string(b))
	}
	return e
}

// Answer is POST /wunder's JSON answer (stream: false).
type Answer struct {
	SessionID  string `json:"session_id"`
	RunID      string `json:"run_id"`
	State      string `json:"state"`
	Answer     string `json:"answer"`
	Usage      Usage  `json:"usage"`
	StopReason string `json:"stop_reason"`
	Error      string `json:"error"`
}

// AskJSON runs a task with POST /wunder and stream: false: it waits for the
// run to end and returns the answer.
func (c *Client) AskJSON(ctx context.Context, req RunRequest) (*Answer, error) {
	stream := false
	req.Stream = &stream
	var a Answer
	if err := c.do(ctx, http.MethodPost, "/wunder", req, &a); err != nil {
		return nil, err
	}
	return &a, nil
}
