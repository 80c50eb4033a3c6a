package a2ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Batch is a checked list of server-to-client messages: what one call of
// the a2ui tool sends.
type Batch struct {
	// Messages are the messages, each with "version": "v0.9" (added
	// where the model left it out), as compact JSON.
	Messages []json.RawMessage
	// Surfaces are the surface ids the messages touch, in order of first
	// mention.
	Surfaces []string

	// The decoded messages, for Text.
	decoded []map[string]any
}

// JSON is the batch's messages as one JSON list: the data of an A2UI
// DataPart.
func (b *Batch) JSON() json.RawMessage {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, m := range b.Messages {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(m)
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// Error lists what is wrong with a batch, each problem with its JSON path.
type Error struct {
	Problems []string
	// More counts the problems beyond those listed.
	More int
}

// maxProblems bounds the problems an Error lists.
const maxProblems = 20

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("the A2UI messages are not valid")
	if len(e.Problems) > 1 {
		fmt.Fprintf(&b, " (%d problems)", len(e.Problems)+e.More)
	}
	b.WriteString(":")
	for _, p := range e.Problems {
		b.WriteString("\n- ")
		b.WriteString(p)
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "\n- ... and %d more", e.More)
	}
	return b.String()
}

// The message kinds, in the order the specification lists them.
const (
	kindCreate     = "createSurface"
	kindComponents = "updateComponents"
	kindData       = "updateDataModel"
	kindDelete     = "deleteSurface"
)

var messageKinds = []string{kindCreate, kindComponents, kindData, kindDelete}

// Validate checks raw, a JSON list of A2UI v0.9 server-to-client
// messages (a single message object is taken as a list of one), against
// the protocol and the basic catalog. It returns the batch, or an *Error
// listing every problem (or a plain error when raw is not JSON or out of
// bounds).
func Validate(raw json.RawMessage) (*Batch, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, fmt.Errorf(`messages is required: a list of A2UI messages, e.g. [{"version":"v0.9","createSurface":{"surfaceId":"s1","catalogId":%q}}, ...]`, BasicCatalogID)
	case len(raw) > MaxBytes:
		return nil, fmt.Errorf("the messages are %d bytes, over the limit of %d: send fewer components per call", len(raw), MaxBytes)
	}
	if d := depth(raw); d > MaxDepth {
		return nil, fmt.Errorf("the messages nest %d levels deep, over the limit of %d: keep the data model flatter", d, MaxDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("messages is not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("messages has text after its JSON value")
	}
	var list []any
	switch t := v.(type) {
	case []any:
		list = t
	case map[string]any:
		list = []any{t}
	default:
		return nil, fmt.Errorf("messages must be a list of A2UI message objects, not %s", typeName(v))
	}
	switch {
	case len(list) == 0:
		return nil, fmt.Errorf("messages is empty: send at least one A2UI message")
	case len(list) > MaxMessages:
		return nil, fmt.Errorf("%d messages, over the limit of %d a call: split them over several calls", len(list), MaxMessages)
	}
	c := &checker{created: map[string]*surface{}, touched: map[string]bool{}}
	b := &Batch{}
	for i, m := range list {
		at := fmt.Sprintf("messages[%d]", i)
		obj, ok := m.(map[string]any)
		if !ok {
			c.fail(at, "must be an object such as {\"version\":%q,\"createSurface\":{...}}, not %s", Version, typeName(m))
			continue
		}
		sid := c.message(at, obj)
		if sid != "" && !c.touched[sid] {
			c.touched[sid] = true
			b.Surfaces = append(b.Surfaces, sid)
		}
		obj["version"] = Version
		b.decoded = append(b.decoded, obj)
	}
	c.finish()
	if len(c.problems) > 0 {
		return nil, &Error{Problems: c.problems, More: c.more}
	}
	for _, obj := range b.decoded {
		b.Messages = append(b.Messages, compact(obj))
	}
	return b, nil
}

// surface is what a batch defines of a surface it creates.
type surface struct {
	at    string // where it was created
	comps map[string]*comp
	order []string
}

// comp is a component as the tree checks need it.
type comp struct {
	at   string
	refs []ref
}

// ref is a component id a property names.
type ref struct {
	at, id string
}

type checker struct {
	problems []string
	more     int
	// created are the surfaces created in this batch (and not deleted
	// after).
	created map[string]*surface
	touched map[string]bool
	nComps  int
}

func (c *checker) fail(at, format string, args ...any) {
	if len(c.problems) >= maxProblems {
		c.more++
		return
	}
	c.problems = append(c.problems, at+": "+fmt.Sprintf(format, args...))
}

// message checks one message and returns its surface id.
func (c *checker) message(at string, m map[string]any) string {
	var kind string
	unknown := false
	for _, k := range sortedKeys(m) {
		v := m[k]
		switch {
		case k == "version":
			if s, ok := v.(string); !ok || s != Version {
				c.fail(at+".version", "must be %q (this is A2UI v0.9), not %s", Version, show(v))
			}
		case slices.Contains(messageKinds, k):
			if kind != "" {
				c.fail(at, "has both %s and %s: a message carries exactly one; send two messages", kind, k)
				continue
			}
			kind = k
		default:
			unknown = true
			c.fail(at, "unknown key %q: a message is {\"version\":%q, %s: {...}}", k, Version, orList(messageKinds))
		}
	}
	if kind == "" {
		if !unknown {
			c.fail(at, "needs one of %s", orList(messageKinds))
		}
		return ""
	}
	at += "." + kind
	body, ok := m[kind].(map[string]any)
	if !ok {
		c.fail(at, "must be an object, not %s", typeName(m[kind]))
		return ""
	}
	switch kind {
	case kindCreate:
		return c.create(at, body)
	case kindComponents:
		return c.update(at, body)
	case kindData:
		return c.data(at, body)
	default:
		sid := c.surfaceID(at, body)
		c.allowed(at, body, "surfaceId")
		delete(c.created, sid)
		return sid
	}
}

// surfaceID checks and returns body's surfaceId ("" when missing or bad).
func (c *checker) surfaceID(at string, body map[string]any) string {
	v, ok := body["surfaceId"]
	if !ok {
		c.fail(at, "surfaceId is required")
		return ""
	}
	return c.id(at+".surfaceId", v)
}

// id checks a surface or component id.
func (c *checker) id(at string, v any) string {
	s, ok := v.(string)
	switch {
	case !ok:
		c.fail(at, "must be a string, not %s", typeName(v))
	case s == "":
		c.fail(at, "must not be empty")
	case len(s) > MaxIDLength:
		c.fail(at, "is %d bytes, over the limit of %d", len(s), MaxIDLength)
	default:
		return s
	}
	return ""
}

// allowed reports the keys of body that are not among keys.
func (c *checker) allowed(at string, body map[string]any, keys ...string) {
	for _, k := range sortedKeys(body) {
		if !slices.Contains(keys, k) {
			c.fail(at, "unknown property %q (allowed: %s)", k, strings.Join(keys, ", "))
		}
	}
}

var hexColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

func (c *checker) create(at string, body map[string]any) string {
	sid := c.surfaceID(at, body)
	c.allowed(at, body, "surfaceId", "catalogId", "theme", "sendDataModel")
	switch cat, ok := body["catalogId"]; {
	case !ok:
		c.fail(at, "catalogId is required: use %q", BasicCatalogID)
	case cat != BasicCatalogID:
		c.fail(at+".catalogId", "must be %q (the basic catalog, the only one this server renders), not %s", BasicCatalogID, show(cat))
	}
	if v, ok := body["sendDataModel"]; ok {
		if _, ok := v.(bool); !ok {
			c.fail(at+".sendDataModel", "must be a boolean, not %s", typeName(v))
		}
	}
	if v, ok := body["theme"]; ok {
		theme, ok := v.(map[string]any)
		if !ok {
			c.fail(at+".theme", "must be an object, not %s", typeName(v))
		}
		if pc, ok := theme["primaryColor"]; ok {
			if s, _ := pc.(string); !hexColor.MatchString(s) {
				c.fail(at+".theme.primaryColor", "must be a color such as \"#00BFFF\", not %s", show(pc))
			}
		}
		for _, k := range []string{"iconUrl", "agentDisplayName"} {
			if v, ok := theme[k]; ok {
				if _, ok := v.(string); !ok {
					c.fail(at+".theme."+k, "must be a string, not %s", typeName(v))
				}
			}
		}
	}
	if sid == "" {
		return ""
	}
	if prev, ok := c.created[sid]; ok {
		c.fail(at, "surface %q was already created by %s: delete it first (deleteSurface) or send updateComponents to change it", sid, prev.at)
		return sid
	}
	c.created[sid] = &surface{at: at, comps: map[string]*comp{}}
	return sid
}

func (c *checker) update(at string, body map[string]any) string {
	sid := c.surfaceID(at, body)
	c.allowed(at, body, "surfaceId", "components")
	list, ok := body["components"].([]any)
	switch {
	case body["components"] == nil:
		c.fail(at, "components is required: a list of components, one of them with id \"root\"")
		return sid
	case !ok:
		c.fail(at+".components", "must be a list, not %s", typeName(body["components"]))
		return sid
	case len(list) == 0:
		c.fail(at+".components", "must not be empty")
		return sid
	}
	if c.nComps += len(list); c.nComps > MaxComponents {
		c.fail(at+".components", "the batch has %d components, over the limit of %d: send the rest in another call", c.nComps, MaxComponents)
		return sid
	}
	s := c.created[sid]
	seen := map[string]string{}
	for j, v := range list {
		cat := fmt.Sprintf("%s.components[%d]", at, j)
		id, refs := c.component(cat, v)
		if id == "" {
			continue
		}
		if prev, ok := seen[id]; ok {
			c.fail(cat+".id", "%q is also the id of %s: component ids are unique in a surface", id, prev)
			continue
		}
		seen[id] = cat
		if s != nil {
			if _, ok := s.comps[id]; !ok {
				s.order = append(s.order, id)
			}
			s.comps[id] = &comp{at: cat, refs: refs}
		}
	}
	return sid
}

func (c *checker) data(at string, body map[string]any) string {
	sid := c.surfaceID(at, body)
	c.allowed(at, body, "surfaceId", "path", "value")
	if v, ok := body["path"]; ok {
		s, ok := v.(string)
		if !ok || (s != "" && !strings.HasPrefix(s, "/")) {
			c.fail(at+".path", "must be a JSON Pointer such as \"/user/name\" (or \"/\" for the whole model), not %s", show(v))
		}
	}
	return sid
}

// finish checks the trees of the surfaces the batch created: a root,
// children that exist, no cycles, a bounded depth.
func (c *checker) finish() {
	for _, sid := range sortedKeys(c.created) {
		s := c.created[sid]
		if len(s.comps) == 0 {
			continue // components may follow in a later call
		}
		if _, ok := s.comps["root"]; !ok {
			c.fail(s.at, "surface %q has components but none with id \"root\": the root of its tree must be called \"root\"", sid)
			continue
		}
		for _, id := range s.order {
			for _, r := range s.comps[id].refs {
				if _, ok := s.comps[r.id]; !ok {
					c.fail(r.at, "names component %q, which surface %q does not define", r.id, sid)
				}
			}
		}
		c.tree(sid, s)
	}
}

// tree walks a surface's components from its root, reporting a cycle or
// a tree deeper than MaxTreeDepth.
func (c *checker) tree(sid string, s *surface) {
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var walk func(id string, depth int) bool
	walk = func(id string, depth int) bool {
		cp, ok := s.comps[id]
		if !ok {
			return true
		}
		switch state[id] {
		case open:
			c.fail(cp.at, "component %q of surface %q contains itself: the components must form a tree", id, sid)
			return false
		case done:
			return true
		}
		if depth > MaxTreeDepth {
			c.fail(cp.at, "surface %q nests deeper than %d components", sid, MaxTreeDepth)
			return false
		}
		state[id] = open
		for _, r := range cp.refs {
			if !walk(r.id, depth+1) {
				return false
			}
		}
		state[id] = done
		return true
	}
	walk("root", 1)
}

// depth is the nesting depth of JSON raw (0 for a scalar), read without
// decoding.
func depth(raw []byte) int {
	d, max := 0, 0
	in, esc := false, false
	for _, ch := range raw {
		switch {
		case esc:
			esc = false
		case in && ch == '\\':
			esc = true
		case ch == '"':
			in = !in
		case in:
		case ch == '[' || ch == '{':
			if d++; d > max {
				max = d
			}
		case ch == ']' || ch == '}':
			d--
		}
	}
	return max
}

// compact encodes v without HTML escaping.
func compact(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // decoded JSON encodes
	return bytes.TrimRight(b.Bytes(), "\n")
}

// typeName names v's JSON type for a message.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// show quotes a short value for a message, or names its type.
func show(v any) string {
	switch t := v.(type) {
	case string:
		if len(t) > 80 {
			t = t[:80] + "..."
		}
		return fmt.Sprintf("%q", t)
	case json.Number, bool:
		return fmt.Sprint(t)
	}
	return typeName(v)
}

func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}
