package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// Approval is a tool call waiting for (or given) a person's decision, as
// GET /wunder/runs/{run_id}/approvals lists it; the data of an
// approval_required event has the same fields (but state).
type Approval struct {
	ID        string          `json:"approval_id"`
	RunID     string          `json:"run_id"`
	Kind      string          `json:"kind"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Reason    string          `json:"reason"`
	// Missing is the JSON Schema of the arguments a param_required
	// approval asks for.
	Missing   json.RawMessage `json:"missing,omitempty"`
	Decisions []string        `json:"decisions"`
	State     string          `json:"state"`
}

// Decision is a person's answer to an approval: approve, edit (with
// Arguments, a JSON object), reject (with an optional Reason the model
// reads) or cancel.
type Decision struct {
	Decision  string          `json:"decision"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Reason    string          `json:"reason,omitempty"`
}

// Approvals lists a run's approvals, oldest first.
func (c *Client) Approvals(ctx context.Context, userID, runID string) ([]Approval, error) {
	var out struct {
		Approvals []Approval `json:"approvals"`
	}
	path := "/wunder/runs/" + url.PathEscape(runID) + "/approvals?user_id=" + url.QueryEscape(userID)
	if err := c.do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return out.Approvals, nil
}

// Decide decides one approval and returns it decided. A second decision is
// an *Error with status 409.
func (c *Client) Decide(ctx context.Context, userID, runID, approvalID string, d Decision) (*Approval, error) {
	var out Approval
	path := "/wunder/runs/" + url.PathEscape(runID) + "/approvals/" + url.PathEscape(approvalID) + "?user_id=" + url.QueryEscape(userID)
	if err := c.do(ctx, http.MethodPost, path, d, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Question is what the model asks the user (ask_user), as the data of a
// user_input_required event says it.
type Question struct {
	ID       string          `json:"question_id"`
	Question string          `json:"question"`
	Options  []string        `json:"options,omitempty"`
	Multi    bool            `json:"multi,omitempty"`
	FreeText bool            `json:"free_text,omitempty"`
	Default  json.RawMessage `json:"default,omitempty"`
}

// Answer answers a run's question (questionID; "" = the run's one pending
// question) with answer: a string, or a list of strings for a multiple
// choice. An answer that is no option is an *Error with status 400; a
// second answer one with status 409.
func (c *Client) Answer(ctx context.Context, userID, runID, questionID string, answer any) (*Approval, error) {
	var out Approval
	body := struct {
		Answer     any    `json:"answer"`
		QuestionID string `json:"question_id,omitempty"`
	}{answer, questionID}
	path := "/wunder/runs/" + url.PathEscape(runID) + "/input?user_id=" + url.QueryEscape(userID)
	if err := c.do(ctx, http.MethodPost, path, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
