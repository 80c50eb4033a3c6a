package storage

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

// PushConfig is an A2A push notification config as stored in push_configs.
// cmd/wunder adapts it to the a2a front-end's PushStore (storage imports
// no front-end).
type PushConfig struct {
	TaskID, ID, UserID, URL, Token string
	AuthScheme, AuthCredentials    string
	// Version is the A2A version the config was made in ("1.0", "0.3").
	Version   string
	CreatedAt time.Time
}

// pushRow is a push_configs row. The table's id is "<task id>/<config id>"
// (config ids are unique per task only); the auth column holds the
// scheme, credentials and protocol version as JSON, so no migration was
// needed.
type pushRow struct {
	bun.BaseModel `bun:"table:push_configs"`

	ID        string    `bun:"id,pk"`
	RunID     string    `bun:"run_id,notnull"`
	UserID    string    `bun:"user_id,notnull"`
	URL       string    `bun:"url,notnull"`
	Token     string    `bun:"token,notnull"`
	Auth      *string   `bun:"auth"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

type pushAuth struct {
	Scheme      string `json:"scheme,omitempty"`
	Credentials string `json:"credentials,omitempty"`
	Version     string `json:"version,omitempty"`
}

func toPushRow(c *PushConfig) *pushRow {
	st := orchestrator.StoredText
	b, _ := json.Marshal(pushAuth{st(c.AuthScheme), st(c.AuthCredentials), st(c.Version)})
	auth := string(b)
	return &pushRow{ID: c.TaskID + "/" + c.ID, RunID: c.TaskID, UserID: c.UserID, URL: c.URL, Token: c.Token,
		Auth: &auth, CreatedAt: stamp(c.CreatedAt)}
}

func fromPushRow(r *pushRow) *PushConfig {
	c := &PushConfig{TaskID: r.RunID, ID: strings.TrimPrefix(r.ID, r.RunID+"/"), UserID: r.UserID, URL: r.URL, Token: r.Token, CreatedAt: r.CreatedAt.UTC()}
	if r.Auth != nil {
		var a pushAuth
		if json.Unmarshal([]byte(*r.Auth), &a) == nil {
			c.AuthScheme, c.AuthCredentials, c.Version = a.Scheme, a.Credentials, a.Version
		}
	}
	return c
}

// SavePushConfig inserts or replaces the config (TaskID, ID). The task must
// exist (ErrNotFound otherwise); a zero CreatedAt is set to now.
func (s *Store) SavePushConfig(ctx context.Context, c *PushConfig) error {
	if c == nil || c.TaskID == "" || c.ID == "" {
		return invalid("push config needs a task id and an id")
	}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		_, err := db.NewInsert().Model(toPushRow(c)).
			On("CONFLICT (id) DO UPDATE").
			Set("url = EXCLUDED.url, token = EXCLUDED.token, auth = EXCLUDED.auth, user_id = EXCLUDED.user_id").
			Exec(ctx)
		return dbErr(err, "save push config", "run "+c.TaskID)
	})
}

// GetPushConfig returns one config of a task.
func (s *Store) GetPushConfig(ctx context.Context, taskID, id string) (*PushConfig, error) {
	row := new(pushRow)
	if err := s.db.NewSelect().Model(row).Where("id = ?", taskID+"/"+id).Scan(ctx); err != nil {
		return nil, dbErr(err, "get push config", "push config "+taskID+"/"+id)
	}
	return fromPushRow(row), nil
}

// ListPushConfigs returns a task's configs, oldest first.
func (s *Store) ListPushConfigs(ctx context.Context, taskID string) ([]*PushConfig, error) {
	var rows []pushRow
	if err := s.db.NewSelect().Model(&rows).Where("run_id = ?", taskID).OrderExpr("created_at ASC, id ASC").Scan(ctx); err != nil {
		return nil, dbErr(err, "list push configs", "run "+taskID)
	}
	out := make([]*PushConfig, len(rows))
	for i := range rows {
		out[i] = fromPushRow(&rows[i])
	}
	return out, nil
}

// DeletePushConfig removes one config; ErrNotFound if it does not exist.
func (s *Store) DeletePushConfig(ctx context.Context, taskID, id string) error {
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		res, err := db.NewDelete().Model((*pushRow)(nil)).Where("id = ?", taskID+"/"+id).Exec(ctx)
		return affected(res, err, "delete push config", "push config "+taskID+"/"+id)
	})
}
