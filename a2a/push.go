package a2a

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/netguard"
	"github.com/wunder/wunder/orchestrator"
)

// PushConfig is a stored push notification config of a task.
type PushConfig struct {
	TaskID string
	ID     string
	UserID string
	URL    string
	Token  string
	// AuthScheme and AuthCredentials make the Authorization header of each
	// delivery ("Bearer" + token); empty = none.
	AuthScheme, AuthCredentials string
	// Version is the protocol the config was created in; it selects the
	// body shape (1.0 StreamResponse, 0.3 Task).
	Version   string
	CreatedAt time.Time
}

// PushStore keeps push configs. storage implements it (cmd/wunder adapts
// it); [MemoryPushStore] is the in-memory one. Lookups of a missing config
// return an error wrapping orchestrator.ErrNotFound.
type PushStore interface {
	// SavePushConfig inserts or replaces the config (TaskID, ID).
	SavePushConfig(ctx context.Context, c *PushConfig) error
	GetPushConfig(ctx context.Context, taskID, id string) (*PushConfig, error)
	// ListPushConfigs returns a task's configs, oldest first.
	ListPushConfigs(ctx context.Context, taskID string) ([]*PushConfig, error)
	DeletePushConfig(ctx context.Context, taskID, id string) error
}

// PushOptions enable push notifications. Zero values mean the defaults.
type PushOptions struct {
	Store PushStore
	// AllowPrivate lets webhooks target private, loopback and link-local
	// addresses (the SSRF guard's opt-out; tests set it).
	AllowPrivate bool
	// MaxAttempts per notification. Default 3.
	MaxAttempts int
	// InitialBackoff between attempts, doubled each time. Default 500ms.
	InitialBackoff time.Duration
	// Timeout of one delivery. Default 10s.
	Timeout time.Duration
	// MaxConfigsPerTask bounds the configs of one task (every event goes
	// to each): one more is refused with InvalidParams naming the bound.
	// Default DefaultMaxPushConfigs.
	MaxConfigsPerTask int
	// WrapTransport, when set, wraps the webhooks' transport (tracing:
	// a traceparent on each notification).
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// Carry, when set, takes from the request that set a push config what
	// the task's notifications carry into their own contexts (its trace,
	// so a notification continues the trace of the request that asked for
	// it); nil = nothing.
	Carry func(from context.Context) func(context.Context) context.Context
}

// pusher delivers notifications: one watcher goroutine per task with
// configs, following the task's events until its final one.
type pusher struct {
	h    *Handler
	o    PushOptions
	hc   *http.Client
	ctx  context.Context
	stop context.CancelFunc

	// mu guards watching and orders watch against close.
	mu       sync.Mutex
	watching map[string]bool
}

func newPusher(h *Handler, o PushOptions) *pusher {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	if o.InitialBackoff <= 0 {
		o.InitialBackoff = 500 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	// The SSRF guard runs again at connect time (internal/netguard), so
	// DNS rebinding gains nothing.
	var tr http.RoundTripper = netguard.Transport(o.Timeout, o.AllowPrivate)
	if o.WrapTransport != nil {
		tr = o.WrapTransport(tr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &pusher{h: h, o: o, hc: &http.Client{Transport: tr, Timeout: o.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		ctx: ctx, stop: cancel, watching: map[string]bool{}}
}

func (p *pusher) close() {
	p.mu.Lock()
	p.stop()
	p.mu.Unlock()
}

// checkTarget is the SSRF guard at creation time (internal/netguard): an
// absolute http(s) URL, and no private, loopback or link-local host unless
// allowed.
func (p *pusher) checkTarget(ctx context.Context, raw string) error {
	err := netguard.CheckURL(ctx, raw, p.o.AllowPrivate)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, netguard.ErrNotHTTP):
		return errParams("push notification url must be an absolute http(s) URL")
	case errors.Is(err, netguard.ErrUnresolved):
		return errParams("push notification url: %v", err)
	}
	return errParams("push notification url %s targets a private address", raw)
}

// checkPush refuses a push config before anything is created: push not
// supported, or a target the SSRF guard blocks.
func (h *Handler) checkPush(ctx context.Context, c w.PushConfig) error {
	if h.push == nil {
		return errKind(w.ErrPushNotSupported, "push notifications are not supported")
	}
	return h.push.checkTarget(ctx, c.URL)
}

// createPush checks and saves a push config of the caller's task, starts
// the task's watcher and returns the config as saved.
func (h *Handler) createPush(ctx context.Context, v w.Version, userID, taskID string, c w.PushConfig) (*PushConfig, error) {
	if err := h.checkPush(ctx, c); err != nil {
		return nil, err
	}
	r, err := h.b.GetRun(ctx, userID, taskID)
	if err != nil {
		return nil, err
	}
	if c.ID == "" {
		c.ID = "push_" + strings.ToLower(rand.Text())
	}
	pc := &PushConfig{TaskID: r.ID, ID: c.ID, UserID: userID, URL: c.URL, Token: c.Token, Version: string(v), CreatedAt: time.Now().UTC()}
	if c.Auth != nil {
		pc.AuthScheme, pc.AuthCredentials = c.Auth.Scheme, c.Auth.Credentials
	}
	if err := h.push.roomFor(ctx, r.ID, c.ID); err != nil {
		return nil, err
	}
	if err := h.push.o.Store.SavePushConfig(ctx, pc); err != nil {
		return nil, err
	}
	h.push.watch(ctx, userID, r.ID)
	return pc, nil
}

// DefaultMaxPushConfigs is PushOptions.MaxConfigsPerTask's default.
const DefaultMaxPushConfigs = 10

// roomFor refuses a new config id for a task that has as many configs as
// it may (replacing one of them is not a new one). Two creates at once may
// pass it together: the bound is a cap on amplification, not a count.
func (p *pusher) roomFor(ctx context.Context, taskID, id string) error {
	limit := p.o.MaxConfigsPerTask
	if limit <= 0 {
		limit = DefaultMaxPushConfigs
	}
	have, err := p.o.Store.ListPushConfigs(ctx, taskID)
	if err != nil {
		return err
	}
	if len(have) < limit {
		return nil
	}
	for _, c := range have {
		if c.ID == id {
			return nil
		}
	}
	return errParams("task %s has %d push notification configs, the most a task may have (a2a.push.max_configs_per_task); delete one first", taskID, len(have))
}

func wireConfig(c *PushConfig) w.PushConfig {
	out := w.PushConfig{TaskID: c.TaskID, ID: c.ID, URL: c.URL, Token: c.Token}
	if c.AuthScheme != "" {
		out.Auth = &w.PushAuth{Scheme: c.AuthScheme, Credentials: c.AuthCredentials}
	}
	return out
}

// pushMethod serves the four push config methods of either version.
func (h *Handler) pushMethod(ctx context.Context, c *call) (any, error) {
	if h.push == nil {
		return nil, errKind(w.ErrPushNotSupported, "push notifications are not supported")
	}
	p, err := w.DecodePushParams(c.m.Params)
	if err != nil {
		return nil, errParams("%v", err)
	}
	run, err := h.b.GetRun(ctx, c.userID, p.TaskID)
	if err != nil {
		return nil, err
	}
	ms, st := w.MethodsOf(c.v), h.push.o.Store
	switch c.m.Method {
	case ms.PushSet:
		if p.Config == nil {
			return nil, errParams("a push notification config with a url is required")
		}
		pc, err := h.createPush(ctx, c.v, run.UserID, p.TaskID, *p.Config) // the task's owner
		if err != nil {
			return nil, err
		}
		return w.EncodePushConfig(c.v, wireConfig(pc)), nil
	case ms.PushGet:
		id := p.ConfigID
		if id == "" { // 0.3: the task's first config
			cfgs, err := st.ListPushConfigs(ctx, p.TaskID)
			if err != nil {
				return nil, err
			}
			if len(cfgs) == 0 {
				return nil, errParams("task %s has no push notification config", p.TaskID)
			}
			return w.EncodePushConfig(c.v, wireConfig(cfgs[0])), nil
		}
		pc, err := st.GetPushConfig(ctx, p.TaskID, id)
		if errors.Is(err, orchestrator.ErrNotFound) {
			return nil, errParams("task %s has no push notification config %q", p.TaskID, id)
		}
		if err != nil {
			return nil, err
		}
		return w.EncodePushConfig(c.v, wireConfig(pc)), nil
	case ms.PushList:
		cfgs, err := st.ListPushConfigs(ctx, p.TaskID)
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, len(cfgs))
		for _, pc := range cfgs {
			out = append(out, w.EncodePushConfig(c.v, wireConfig(pc)))
		}
		if c.v == w.V10 {
			return map[string]any{"configs": out}, nil
		}
		return out, nil
	default: // delete
		if p.ConfigID == "" {
			return nil, errParams("the push notification config id is required")
		}
		// Delete is idempotent (the spec): a config already gone is
		// deleted. The task itself must still be the caller's (GetRun
		// above), so this says nothing about other users' tasks.
		err := st.DeletePushConfig(ctx, p.TaskID, p.ConfigID)
		if errors.Is(err, orchestrator.ErrNotFound) {
			err = nil
		}
		return nil, err
	}
}
