package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

func errNotFoundRun(id string) error { return fmt.Errorf("%w: run %s", ErrNotFound, id) }

func errNotFoundSession(id string) error { return fmt.Errorf("%w: session %s", ErrNotFound, id) }

// GetSession returns a session the user may see ("" = any user).
func (o *Orchestrator) GetSession(ctx context.Context, userID, sessionID string) (*Session, error) {
	if err := CheckSessionID(sessionID); err != nil {
		return nil, err
	}
	s, err := o.store.GetSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if !visible(userID, s.UserID) {
		return nil, errNotFoundSession(sessionID)
	}
	return s, nil
}

// ListSessions returns a user's sessions, most recently updated first.
func (o *Orchestrator) ListSessions(ctx context.Context, userID string, page Page) ([]*Session, error) {
	if err := validUserID(userID); err != nil {
		return nil, err
	}
	return o.store.ListSessions(ctx, userID, page)
}

// History returns a session's messages, oldest first (the last limit ones;
// limit <= 0 means all).
func (o *Orchestrator) History(ctx context.Context, userID, sessionID string, limit int) ([]Message, error) {
	if _, err := o.GetSession(ctx, userID, sessionID); err != nil {
		return nil, err
	}
	return o.store.ListMessages(ctx, sessionID, limit)
}

// MaxSessionTitle is the longest title, in characters, a session can be
// given (RenameSession); titles taken from a question are cut at 60.
const MaxSessionTitle = 200

// RenameSession gives a user's session a new title: trimmed, 1 to
// MaxSessionTitle characters, one line. It does not touch the session's
// UpdatedAt, so a rename does not reorder the user's list.
func (o *Orchestrator) RenameSession(ctx context.Context, userID, sessionID, title string) (*Session, error) {
	title = strings.TrimSpace(title)
	switch n := utf8.RuneCountInString(title); {
	case !utf8.ValidString(title):
		return nil, invalidf("title is not valid UTF-8")
	case n == 0:
		return nil, invalidf("title is empty")
	case n > MaxSessionTitle:
		return nil, invalidf("title is %d characters; the limit is %d", n, MaxSessionTitle)
	case strings.ContainsFunc(title, unicode.IsControl):
		return nil, invalidf("title holds a control character (a line break or tab); it must be one line")
	}
	s, err := o.GetSession(ctx, userID, sessionID)
	if err != nil {
		return nil, err
	}
	if err := o.store.RenameSession(ctx, sessionID, title); err != nil {
		return nil, err
	}
	s.Title = title
	return s, nil
}

// DeleteSession removes a session and everything in it. A session with a
// queued or running run is ErrConflict: cancel the run first.
func (o *Orchestrator) DeleteSession(ctx context.Context, userID, sessionID string) error {
	if _, err := o.GetSession(ctx, userID, sessionID); err != nil {
		return err
	}
	o.mu.Lock()
	busy := slices.ContainsFunc(mapValues(o.live), func(lr *liveRun) bool {
		return lr.sessionID == sessionID && !lr.snapshot().State.Terminal()
	})
	o.mu.Unlock()
	if !busy {
		active, err := o.store.ListRuns(ctx, RunFilter{SessionID: sessionID, States: activeStates, Page: Page{Limit: 1}})
		if err != nil {
			return err
		}
		busy = len(active) > 0
	}
	if busy {
		return fmt.Errorf("%w: session %s has a run in progress; cancel it first", ErrConflict, sessionID)
	}
	// The tool logs of a run that just ended may still wait to be stored
	// (toollog.go): they go first, then with the rest.
	if err := o.toolLogs.flush(ctx); err != nil {
		return err
	}
	return o.store.DeleteSession(ctx, sessionID)
}

// UserStats is a user as the monitor knows them: seen through their
// sessions.
type UserStats struct {
	UserID     string    `json:"user_id"`
	Sessions   int       `json:"sessions"`
	Runs       int       `json:"runs"`
	LastActive time.Time `json:"last_active"`
}

// Users lists the users that have sessions, most recently active first.
func (o *Orchestrator) Users(ctx context.Context, page Page) ([]UserStats, error) {
	return o.store.ListUserStats(ctx, page)
}

// DeleteUserData deletes every session of a user with its history, runs,
// events, approvals and tool logs, those of runs that just ended
// included. It refuses (ErrConflict) while one of the user's runs is in
// progress: cancel it first.
func (o *Orchestrator) DeleteUserData(ctx context.Context, userID string) error {
	if err := validUserID(userID); err != nil {
		return err
	}
	o.mu.Lock()
	busy := slices.ContainsFunc(mapValues(o.live), func(lr *liveRun) bool {
		return lr.userID == userID && !lr.snapshot().State.Terminal()
	})
	o.mu.Unlock()
	if !busy {
		active, err := o.store.ListRuns(ctx, RunFilter{UserID: userID, States: activeStates, Page: Page{Limit: 1}})
		if err != nil {
			return err
		}
		busy = len(active) > 0
	}
	if busy {
		return fmt.Errorf("%w: user %s has a run in progress; cancel it first", ErrConflict, userID)
	}
	if o.opts.Memory != nil {
		defer o.opts.Memory.ForgetUser(userID) // the user's switch goes with the data
	}
	// A run that just ended may have tool logs still waiting to be stored
	// (toollog.go): they go first, then with the rest.
	if err := o.toolLogs.flush(ctx); err != nil {
		return err
	}
	return o.store.DeleteUserData(ctx, userID)
}

func mapValues[K comparable, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
