package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// Owners at a peer. The peer sees every caller of the pass-through as one,
// wunder, so wunder keeps who made each task and context there
// (PeerIDStore) and holds every user to their own, as it does with its
// own tasks: a task that is not the caller's (or that wunder never saw
// made) is TaskNotFound, a context of another user's is invalid params, a
// listing shows only the caller's tasks. An admin naming no user reaches
// them all. What a call makes is claimed from the peer's answer before the
// caller sees its ids. A call that names a task or context of the
// caller's, or whose answer does, uses it (a listing does not): an id not
// used for storage.a2a_peer_id_retention_days is forgotten, and is then
// TaskNotFound as one wunder never saw.

// Kinds of peer ids.
const (
	peerTask    = "task"
	peerContext = "context"
)

// named are the ids a call names.
type named struct {
	task    string   // the task it reads, cancels, follows or answers
	context string   // the context it continues
	refs    []string // the tasks its message refers to
}

// rules applies the methods' rules of the pass-through to a call and
// returns the ids it names: push configs and the extended card are not
// forwarded, and params are read as wunder's own methods read them (bad
// params are refused here, never forwarded). Params that name a field
// twice, in spellings wunder reads as one (w.SameField), are bad params:
// the peer, reading them its own way, could act on ids other than those
// checked here (another user's task).
func rules(pc *passCall) (named, error) {
	ms := w.MethodsOf(pc.v)
	var n named
	if a, b, found := w.SameField(pc.sent); found {
		return n, errParams("params name a field more than once (%q and %q): name each once, in one spelling", clip(a), clip(b))
	}
	switch pc.m.Method {
	case ms.PushSet, ms.PushGet, ms.PushList, ms.PushDelete:
		return n, errKind(w.ErrPushNotSupported, "push notifications are not supported through the A2A pass-through: follow the task with %s or %s", ms.Subscribe, ms.Get)
	case ms.ExtendedCard:
		return n, errKind(w.ErrExtendedCardNotConfigured, "the extended card is not offered through the A2A pass-through")
	case ms.List:
		if pc.v != w.V10 {
			return n, errMethod(pc.m.Method)
		}
		if _, err := w.DecodeListParams(pc.m.Params); err != nil {
			return n, errParams("%v", err)
		}
	case ms.Get, ms.Cancel, ms.Subscribe:
		p, err := w.DecodeTaskParams(pc.m.Params)
		if err != nil {
			return n, errParams("%v", err)
		}
		n.task = p.ID
	case ms.Send, ms.Stream:
		p, err := w.DecodeSendParams(pc.m.Params)
		if err != nil {
			return n, errParams("%v", err)
		}
		if p.Push != nil {
			return n, errKind(w.ErrPushNotSupported, "push notifications are not supported through the A2A pass-through: leave out the push notification config")
		}
		n.task, n.context, n.refs = p.Message.TaskID, p.Message.ContextID, p.Message.ReferenceTaskIDs
	}
	return n, nil
}

// checkOwners refuses a call that names a task or context that is not its
// user's.
func (p *passThrough) checkOwners(ctx context.Context, pc *passCall, n named) error {
	if pc.userID == "" {
		return nil // an admin naming no user: every user's
	}
	tasks := n.refs
	if n.task != "" {
		tasks = append([]string{n.task}, tasks...)
	}
	if len(tasks) > 0 {
		owners, err := p.opts.IDs.PeerIDOwners(ctx, pc.peer.Name, peerTask, tasks, pc.userID)
		if err != nil {
			return err
		}
		for _, id := range tasks {
			if owners[id] != pc.userID {
				return orchestrator.ErrNotFound // TaskNotFound: not the caller's, or never made here
			}
		}
	}
	if n.context != "" {
		owners, err := p.opts.IDs.PeerIDOwners(ctx, pc.peer.Name, peerContext, []string{n.context}, pc.userID)
		if err != nil {
			return err
		}
		if o, ok := owners[n.context]; ok && o != pc.userID {
			return errParams("contextId %q is not one of the caller's contexts", clip(n.context))
		}
	}
	return nil
}

// errTheirs is a peer's answer naming an id another user owns: it is not
// shown (a peer that gives two tasks one id).
var errTheirs = fmt.Errorf("%w: the peer answered with a task or context that belongs to another user", w.ErrInvalidAgentResponse)

// claims records the owner of the ids an answer item (a result, a stream
// item) names, once each per call: a send's answer makes them the
// caller's. The answers of calls about a task the caller named (get,
// cancel, subscribe) are read first, and claimed only for what no one
// owns yet, so that they cost no write.
type claims struct {
	p    *passThrough
	pc   *passCall
	seen map[string]bool
}

// newClaims is the claims of a call's answer.
func (p *passThrough) newClaims(pc *passCall) *claims { return &claims{p: p, pc: pc} }

// makes reports whether the call's answer makes new tasks and contexts.
func (c *claims) makes() bool {
	ms := w.MethodsOf(c.pc.v)
	return c.pc.m.Method == ms.Send || c.pc.m.Method == ms.Stream
}

// claim records (or, for a call that makes nothing, checks) the ids of
// one item; an id another user owns is errTheirs. The ids to claim go to
// the store in one call (one write for a new task and its context).
func (c *claims) claim(ctx context.Context, item json.RawMessage) error {
	task, context := idsOf(item)
	var kinds, ids []string
	for _, id := range []struct{ kind, id string }{{peerTask, task}, {peerContext, context}} {
		key := id.kind + "\x00" + id.id
		if id.id == "" || c.seen[key] {
			continue
		}
		if !peerIDOK(id.id) {
			return fmt.Errorf("%w: the peer answered with a %s id wunder does not keep (%d bytes)", w.ErrInvalidAgentResponse, id.kind, len(id.id))
		}
		if !c.makes() {
			owners, err := c.p.opts.IDs.PeerIDOwners(ctx, c.pc.peer.Name, id.kind, []string{id.id}, c.pc.owner)
			if err != nil {
				return err
			}
			if owner, ok := owners[id.id]; ok {
				if err := c.mine(owner, id.kind, key); err != nil {
					return err
				}
				continue
			}
		}
		// Made by this call, or seen first in the answer about a task of
		// the caller's (a context its send's answer did not name): the
		// caller's from now on.
		kinds, ids = append(kinds, id.kind), append(ids, id.id)
	}
	if len(ids) == 0 {
		return nil
	}
	owners, err := c.p.opts.IDs.ClaimPeerIDs(ctx, c.pc.peer.Name, c.pc.owner, kinds, ids)
	if err != nil {
		return fmt.Errorf("%w: the %s could not be recorded: %w", orchestrator.ErrUnavailable, strings.Join(kinds, " and "), err)
	}
	for i, owner := range owners {
		if err := c.mine(owner, kinds[i], kinds[i]+"\x00"+ids[i]); err != nil {
			return err
		}
	}
	return nil
}

// mine checks that the owner of the id key (of kind) is the caller, and
// remembers the id as seen.
func (c *claims) mine(owner, kind, key string) error {
	if owner != c.pc.owner && c.pc.userID != "" {
		return fmt.Errorf("%w (a %s; its id is not shown)", errTheirs, kind)
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[key] = true
	return nil
}

// peerIDOK reports whether wunder keeps an id: at most 256 bytes of UTF-8
// without control characters.
func peerIDOK(id string) bool {
	return len(id) <= 256 && utf8.ValidString(id) && !strings.ContainsFunc(id, unicode.IsControl)
}

// idsOf reads the task and context an answer names: a Task, a Message, a
// status or artifact update, bare (0.3, with kind) or wrapped in 1.0's
// {"task": ...}, {"message": ...}, {"statusUpdate": ...},
// {"artifactUpdate": ...}.
func idsOf(item json.RawMessage) (task, context string) {
	var o map[string]json.RawMessage
	if json.Unmarshal(item, &o) != nil {
		return "", ""
	}
	kind := ""
	for _, k := range []string{"task", "message", "statusUpdate", "artifactUpdate"} {
		if inner, ok := o[k]; ok && len(o) == 1 {
			o, kind = nil, k
			if json.Unmarshal(inner, &o) != nil {
				return "", ""
			}
			break
		}
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(o[k], &s)
		return s
	}
	if kind == "" {
		kind = str("kind")
	}
	task = str("taskId")
	if task == "" && kind == "task" {
		task = str("id")
	}
	return task, str("contextId")
}

// filterList keeps in a ListTasks result the tasks of the call's user.
// totalSize becomes what the caller may know: the tasks kept, plus one
// when there is a next page (a lower bound, as wunder's own listing gives
// without a store that counts).
func (p *passThrough) filterList(ctx context.Context, pc *passCall, result json.RawMessage) (json.RawMessage, error) {
	if pc.userID == "" {
		return result, nil
	}
	var res map[string]json.RawMessage
	var tasks []json.RawMessage
	if json.Unmarshal(result, &res) != nil || json.Unmarshal(res["tasks"], &tasks) != nil {
		return nil, fmt.Errorf("%w: the peer's task list cannot be read", w.ErrInvalidAgentResponse)
	}
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i], _ = idsOf(json.RawMessage(`{"task":` + string(t) + `}`))
	}
	owners, err := p.opts.IDs.PeerIDOwners(ctx, pc.peer.Name, peerTask, ids, "") // a listing uses none
	if err != nil {
		return nil, err
	}
	kept := make([]json.RawMessage, 0, len(tasks))
	for i, t := range tasks {
		if ids[i] != "" && owners[ids[i]] == pc.userID {
			kept = append(kept, t)
		}
	}
	res["tasks"], _ = json.Marshal(kept)
	total := len(kept)
	var next string
	if json.Unmarshal(res["nextPageToken"], &next) == nil && next != "" {
		total++
	}
	if _, ok := res["totalSize"]; ok {
		res["totalSize"], _ = json.Marshal(total)
	}
	return json.Marshal(res)
}
