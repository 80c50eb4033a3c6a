package orchestratortest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wunder/wunder/internal/testutil/storetest"
	"github.com/wunder/wunder/orchestrator"
)

// memDefaultLimit is the page size when Page.Limit is zero.
const memDefaultLimit = 100

// NewMemStore returns an in-memory [orchestrator.Store] for tests. It passes
// [RunStoreTests]: the same precision (microseconds, UTC), validation and
// referential rules as the SQL store, so a test that passes on it passes on
// storage too. It is safe for concurrent use; results are copies.
func NewMemStore() orchestrator.Store {
	return &memStore{
		sessions:  map[string]orchestrator.Session{},
		messages:  map[string][]orchestrator.Message{},
		runs:      map[string]orchestrator.Run{},
		events:    map[string][]orchestrator.Event{},
		locks:     map[string]memLock{},
		approvals: map[string][]orchestrator.Approval{},
	}
}

var _ orchestrator.Store = (*memStore)(nil)

type memStore struct {
	// mu guards every field below.
	mu       sync.Mutex
	sessions map[string]orchestrator.Session
	messages map[string][]orchestrator.Message // by session, in append order
	runs     map[string]orchestrator.Run
	events   map[string][]orchestrator.Event // by run, sorted by seq
	toolLogs []orchestrator.ToolLog
	// lastLogID numbers the tool logs as a database's identity column.
	lastLogID int64
	locks     map[string]memLock
	// approvals by run, in creation order
	approvals map[string][]orchestrator.Approval
}

type memLock struct {
	owner   string
	expires time.Time
}

// stamp and stampPtr are times as a store keeps them (storetest).
var stamp = storetest.Stamp

// pastKey reports whether the item at (at, id) comes after k in a listing
// ordered newest first (descending time, then descending id), k's time at
// the precision the store keeps: the items a page after k holds.
func pastKey(k *orchestrator.PageKey, at time.Time, id string) bool {
	if c := at.Compare(k.At.Truncate(time.Microsecond)); c != 0 {
		return c < 0
	}
	return id < k.ID
}

var stampPtr = storetest.StampPtr

func cloneRaw(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

func cloneMessage(m orchestrator.Message) orchestrator.Message {
	if len(m.ToolCalls) == 0 {
		m.ToolCalls = nil
		return m
	}
	calls := make([]orchestrator.ToolCall, len(m.ToolCalls))
	for i, c := range m.ToolCalls {
		c.Arguments = cloneRaw(c.Arguments)
		calls[i] = c
	}
	m.ToolCalls = calls
	return m
}

func cloneRun(r orchestrator.Run) *orchestrator.Run {
	r.StartedAt, r.FinishedAt = stampPtr(r.StartedAt), stampPtr(r.FinishedAt)
	if r.Spec != nil {
		// Through JSON, as the SQL store keeps it.
		b, _ := json.Marshal(r.Spec)
		r.Spec = new(orchestrator.RunSpec)
		_ = json.Unmarshal(b, r.Spec)
	}
	r.Pending = clonePending(r.Pending)
	return &r
}

// pageLen is how many of n ordered items, those after p.After, the page
// holds.
func pageLen(p orchestrator.Page, n int) int { return storetest.PageLen(p, n, memDefaultLimit) }

func (m *memStore) CreateSession(_ context.Context, s *orchestrator.Session) error {
	if s == nil || s.ID == "" {
		return fmt.Errorf("%w: session id is empty", orchestrator.ErrInvalidArgument)
	}
	s.CreatedAt = stamp(s.CreatedAt)
	if s.UpdatedAt.IsZero() {
		s.UpdatedAt = s.CreatedAt
	}
	s.UpdatedAt = stamp(s.UpdatedAt)
	m.mu.Lock()
	defer m.mu.Unlock()
	row := storedSession(*s)
	if _, ok := m.sessions[row.ID]; ok {
		return fmt.Errorf("%w: session %s exists", orchestrator.ErrConflict, s.ID)
	}
	m.sessions[row.ID] = row
	return nil
}

func (m *memStore) GetSession(_ context.Context, id string) (*orchestrator.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[txt(id)]
	if !ok {
		return nil, fmt.Errorf("%w: session %s", orchestrator.ErrNotFound, id)
	}
	return &s, nil
}

func (m *memStore) ListSessions(_ context.Context, userID string, p orchestrator.Page) ([]*orchestrator.Session, error) {
	userID = txt(userID)
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*orchestrator.Session
	for _, s := range m.sessions {
		if s.UserID == userID && (p.After == nil || pastKey(p.After, s.UpdatedAt, s.ID)) {
			out = append(out, &s)
		}
	}
	slices.SortFunc(out, func(a, b *orchestrator.Session) int {
		return cmp.Or(b.UpdatedAt.Compare(a.UpdatedAt), cmp.Compare(b.ID, a.ID))
	})
	return out[:pageLen(p, len(out))], nil
}

func (m *memStore) TouchSession(_ context.Context, id, title string, at time.Time) error {
	id, title = txt(id), txt(title)
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return fmt.Errorf("%w: session %s", orchestrator.ErrNotFound, id)
	}
	if title != "" {
		s.Title = title
	}
	s.UpdatedAt = stamp(at)
	m.sessions[id] = s
	return nil
}

func (m *memStore) RenameSession(_ context.Context, id, title string) error {
	id, title = txt(id), txt(title)
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return fmt.Errorf("%w: session %s", orchestrator.ErrNotFound, id)
	}
	s.Title = title
	m.sessions[id] = s
	return nil
}

func (m *memStore) DeleteSession(_ context.Context, id string) error {
	id = txt(id)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[id]; !ok {
		return fmt.Errorf("%w: session %s", orchestrator.ErrNotFound, id)
	}
	delete(m.sessions, id)
	delete(m.messages, id)
	for rid, r := range m.runs {
		if r.SessionID == id {
			delete(m.runs, rid)
			delete(m.events, rid)
			delete(m.approvals, rid)
		}
	}
	m.toolLogs = slices.DeleteFunc(m.toolLogs, func(l orchestrator.ToolLog) bool { return l.SessionID == id })
	return nil
}

func (m *memStore) AppendMessages(_ context.Context, sessionID string, msgs []orchestrator.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	sessionID = txt(sessionID)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[sessionID]; !ok {
		return fmt.Errorf("%w: session %s", orchestrator.ErrNotFound, sessionID)
	}
	m.appendMessagesLocked(sessionID, msgs)
	return nil
}

func (m *memStore) appendMessagesLocked(sessionID string, msgs []orchestrator.Message) {
	for _, msg := range msgs {
		msg = storedMessage(msg)
		msg.CreatedAt = stamp(msg.CreatedAt)
		m.messages[sessionID] = append(m.messages[sessionID], msg)
	}
}

func (m *memStore) ListMessages(_ context.Context, sessionID string, limit int) ([]orchestrator.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	all := m.messages[txt(sessionID)]
	if limit > 0 && limit < len(all) {
		all = all[len(all)-limit:]
	}
	out := make([]orchestrator.Message, len(all))
	for i, msg := range all {
		out[i] = cloneMessage(msg)
	}
	return out, nil
}

func (m *memStore) CreateRun(_ context.Context, r *orchestrator.Run) error {
	if r == nil || r.ID == "" || r.SessionID == "" {
		return fmt.Errorf("%w: run id and session id are required", orchestrator.ErrInvalidArgument)
	}
	r.CreatedAt = stamp(r.CreatedAt)
	m.mu.Lock()
	defer m.mu.Unlock()
	row := storedRun(*r)
	if _, ok := m.runs[row.ID]; ok {
		return fmt.Errorf("%w: run %s exists", orchestrator.ErrConflict, r.ID)
	}
	if _, ok := m.sessions[row.SessionID]; !ok {
		return fmt.Errorf("%w: session %s", orchestrator.ErrNotFound, r.SessionID)
	}
	m.runs[row.ID] = *cloneRun(row)
	return nil
}

func (m *memStore) CreateRunWith(_ context.Context, s *orchestrator.Session, r *orchestrator.Run, tail orchestrator.RunTail, locks ...orchestrator.NewLock) error {
	if s != nil && s.ID == "" {
		return fmt.Errorf("%w: session id is empty", orchestrator.ErrInvalidArgument)
	}
	if r == nil || r.ID == "" || r.SessionID == "" || (s != nil && r.SessionID != s.ID) {
		return fmt.Errorf("%w: run id and session id are required (and the run must be of the new session)", orchestrator.ErrInvalidArgument)
	}
	for _, l := range locks {
		if err := checkLockArgs(l.Key, r.ID, l.TTL); err != nil {
			return err
		}
	}
	if s != nil {
		s.CreatedAt = stamp(s.CreatedAt)
		if s.UpdatedAt.IsZero() {
			s.UpdatedAt = s.CreatedAt
		}
		s.UpdatedAt = stamp(s.UpdatedAt)
	}
	r.CreatedAt = stamp(r.CreatedAt)
	m.mu.Lock()
	defer m.mu.Unlock()
	rrow := storedRun(*r)
	if s != nil {
		if _, ok := m.sessions[txt(s.ID)]; ok {
			return fmt.Errorf("%w: session %s exists", orchestrator.ErrConflict, s.ID)
		}
	} else if _, ok := m.sessions[rrow.SessionID]; !ok {
		return fmt.Errorf("%w: session %s", orchestrator.ErrNotFound, r.SessionID)
	}
	if _, ok := m.runs[rrow.ID]; ok {
		return fmt.Errorf("%w: run %s exists", orchestrator.ErrConflict, r.ID)
	}
	for _, l := range locks {
		if _, ok := m.locks[txt(l.Key)]; ok {
			return fmt.Errorf("%w: lock %s exists", orchestrator.ErrConflict, l.Key)
		}
	}
	// The events are checked with the run in place (they are of it), and
	// it is removed again when they fail: all or nothing.
	m.runs[rrow.ID] = *cloneRun(rrow)
	evs, err := m.checkEventsLocked(tail.Events)
	if err != nil {
		delete(m.runs, rrow.ID)
		return err
	}
	now := time.Now()
	for _, l := range locks {
		m.locks[txt(l.Key)] = memLock{owner: rrow.ID, expires: now.Add(l.TTL)}
	}
	if s != nil {
		srow := storedSession(*s)
		m.sessions[srow.ID] = srow
	}
	m.appendMessagesLocked(rrow.SessionID, tail.Messages)
	m.appendEventsLocked(evs)
	return nil
}

func (m *memStore) UpdateRun(_ context.Context, r *orchestrator.Run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.updateRunLocked(r)
}

func (m *memStore) EndRun(_ context.Context, r *orchestrator.Run, at time.Time, keys []string, tail orchestrator.RunTail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Everything is checked before anything is written: all or nothing.
	if r == nil {
		return fmt.Errorf("%w: run is nil", orchestrator.ErrInvalidArgument)
	}
	if cur, ok := m.runs[txt(r.ID)]; ok && cur.Owner != txt(r.Owner) {
		return m.updateRunLocked(r) // the fence's error
	}
	if len(tail.Messages) > 0 {
		if _, ok := m.sessions[txt(r.SessionID)]; !ok {
			return fmt.Errorf("%w: session %s", orchestrator.ErrNotFound, r.SessionID)
		}
	}
	evs, err := m.checkEventsLocked(tail.Events)
	if err != nil {
		return err
	}
	if err := m.updateRunLocked(r); err != nil {
		return err
	}
	cur := m.runs[txt(r.ID)]
	if s, ok := m.sessions[cur.SessionID]; ok {
		s.UpdatedAt = stamp(at)
		m.sessions[cur.SessionID] = s
	}
	for _, k := range keys {
		if l, ok := m.locks[txt(k)]; ok && l.owner == cur.ID {
			delete(m.locks, txt(k))
		}
	}
	m.appendMessagesLocked(txt(r.SessionID), tail.Messages)
	m.appendEventsLocked(evs)
	return nil
}

func (m *memStore) updateRunLocked(r *orchestrator.Run) error {
	if r == nil {
		return fmt.Errorf("%w: run is nil", orchestrator.ErrInvalidArgument)
	}
	in := storedRun(*r)
	r = &in
	cur, ok := m.runs[r.ID]
	if !ok {
		return fmt.Errorf("%w: run %s", orchestrator.ErrNotFound, r.ID)
	}
	if cur.Owner != r.Owner {
		return fmt.Errorf("%w: run %s is owned by %q, not %q", orchestrator.ErrConflict, r.ID, cur.Owner, r.Owner)
	}
	cur.State, cur.StopReason, cur.Answer, cur.Error = r.State, r.StopReason, r.Answer, r.Error
	cur.Usage, cur.LastSeq, cur.StartedAt, cur.FinishedAt = r.Usage, r.LastSeq, r.StartedAt, r.FinishedAt
	cur.Pending = r.Pending
	m.runs[r.ID] = *cloneRun(cur)
	return nil
}

func (m *memStore) ClaimRun(_ context.Context, runID, from, to string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.runs[runID]
	if !ok {
		return fmt.Errorf("%w: run %s", orchestrator.ErrNotFound, runID)
	}
	if cur.State.Terminal() || cur.Owner != from {
		return fmt.Errorf("%w: run %s is %s and owned by %q", orchestrator.ErrConflict, runID, cur.State, cur.Owner)
	}
	cur.Owner = to
	m.runs[runID] = cur
	return nil
}

func (m *memStore) RequestCancel(_ context.Context, runID string) (*orchestrator.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.runs[runID]
	if !ok {
		return nil, fmt.Errorf("%w: run %s", orchestrator.ErrNotFound, runID)
	}
	if slices.Contains(orchestrator.Sources(orchestrator.RunCancelling), cur.State) {
		cur.State = orchestrator.RunCancelling
		m.runs[runID] = cur
	}
	return cloneRun(cur), nil
}

func (m *memStore) GetRun(_ context.Context, id string) (*orchestrator.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[txt(id)]
	if !ok {
		return nil, fmt.Errorf("%w: run %s", orchestrator.ErrNotFound, id)
	}
	return cloneRun(r), nil
}

func (m *memStore) ListRuns(_ context.Context, f orchestrator.RunFilter) ([]*orchestrator.Run, error) {
	f = storedFilter(f)
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*orchestrator.Run
	for _, r := range m.runs {
		if (f.UserID == "" || r.UserID == f.UserID) && (f.SessionID == "" || r.SessionID == f.SessionID) &&
			(len(f.States) == 0 || slices.Contains(f.States, r.State)) && (f.Since.IsZero() || !r.CreatedAt.Before(stamp(f.Since))) &&
			(f.Page.After == nil || pastKey(f.Page.After, r.CreatedAt, r.ID)) {
			out = append(out, cloneRun(r))
		}
	}
	slices.SortFunc(out, func(a, b *orchestrator.Run) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return out[:pageLen(f.Page, len(out))], nil
}

func (m *memStore) AppendEvents(_ context.Context, in []orchestrator.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	evs, err := m.checkEventsLocked(in)
	if err != nil {
		return err
	}
	m.appendEventsLocked(evs)
	return nil
}

// checkEventsLocked validates a whole batch (it is written entirely or not
// at all) and returns it as it is stored.
func (m *memStore) checkEventsLocked(in []orchestrator.Event) ([]orchestrator.Event, error) {
	evs := make([]orchestrator.Event, len(in))
	for i, e := range in {
		evs[i] = storedEvent(e)
	}
	seen := map[string]map[int64]bool{}
	for _, e := range evs {
		if e.RunID == "" || e.Seq <= 0 {
			return nil, fmt.Errorf("%w: event needs a run id and a seq >= 1 (run %q, seq %d)", orchestrator.ErrInvalidArgument, e.RunID, e.Seq)
		}
		if _, ok := m.runs[e.RunID]; !ok {
			return nil, fmt.Errorf("%w: run %s", orchestrator.ErrNotFound, e.RunID)
		}
		if seen[e.RunID] == nil {
			seen[e.RunID] = map[int64]bool{}
		}
		_, exists := slices.BinarySearchFunc(m.events[e.RunID], e.Seq, eventBySeq)
		if exists || seen[e.RunID][e.Seq] {
			return nil, fmt.Errorf("%w: event %s/%d exists", orchestrator.ErrConflict, e.RunID, e.Seq)
		}
		seen[e.RunID][e.Seq] = true
	}
	return evs, nil
}

func (m *memStore) appendEventsLocked(evs []orchestrator.Event) {
	for _, e := range evs {
		e.Time = stamp(e.Time) // storedEvent copied Data
		list := m.events[e.RunID]
		i, _ := slices.BinarySearchFunc(list, e.Seq, eventBySeq)
		m.events[e.RunID] = slices.Insert(list, i, e)
	}
}

func eventBySeq(e orchestrator.Event, seq int64) int { return cmp.Compare(e.Seq, seq) }

func (m *memStore) ListEvents(_ context.Context, runID string, afterSeq int64, limit int) ([]orchestrator.Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.events[txt(runID)]
	i, found := slices.BinarySearchFunc(list, afterSeq, eventBySeq)
	if found {
		i++
	}
	list = list[i:]
	if limit > 0 && limit < len(list) {
		list = list[:limit]
	}
	out := make([]orchestrator.Event, len(list))
	for j, e := range list {
		e.Data = cloneRaw(e.Data)
		out[j] = e
	}
	return out, nil
}

func (m *memStore) Close() error { return nil }
