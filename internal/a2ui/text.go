package a2ui

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The text fallback: a batch as plain text, for a client that cannot
// render A2UI (an A2A client that did not activate the extension, a
// transcript). Each surface the batch touches is drawn from its root (or,
// for an update of a surface created earlier, from the components no
// other names), with the data the batch sets filled in: text as lines,
// inputs as "label: value", buttons as "[label]", lists as "- " items.

// MaxTextBytes bounds the text Text returns.
const MaxTextBytes = 4000

// Text renders the batch as plain text.
func (b *Batch) Text() string {
	st := map[string]*textSurface{}
	for _, m := range b.decoded {
		for kind, v := range m {
			body, ok := v.(map[string]any)
			if !ok || kind == "version" {
				continue
			}
			sid, _ := body["surfaceId"].(string)
			s := st[sid]
			if s == nil {
				s = &textSurface{comps: map[string]map[string]any{}}
				st[sid] = s
			}
			switch kind {
			case kindCreate:
				*s = textSurface{comps: map[string]map[string]any{}, created: true}
			case kindDelete:
				s.deleted = true
			case kindComponents:
				s.deleted = false
				list, _ := body["components"].([]any)
				for _, e := range list {
					if c, ok := e.(map[string]any); ok {
						if id, _ := c["id"].(string); id != "" {
							if _, ok := s.comps[id]; !ok {
								s.order = append(s.order, id)
							}
							s.comps[id] = c
						}
					}
				}
			case kindData:
				path, _ := body["path"].(string)
				val, has := body["value"]
				s.data = setPointer(s.data, path, clone(val), has) // the messages stay as sent
				s.paths = append(s.paths, nonEmpty(path, "/"))
			}
		}
	}
	w := &textWriter{}
	for _, sid := range b.Surfaces {
		s := st[sid]
		if s == nil {
			continue
		}
		w.line(0, "[surface "+sid+"]")
		switch {
		case s.deleted:
			w.line(1, "(closed)")
		case len(s.comps) > 0:
			r := &textRender{s: s, w: w, seen: map[string]bool{}}
			if _, ok := s.comps["root"]; ok {
				r.node("root", "", 1, 0)
			} else {
				for _, id := range s.tops() {
					r.node(id, "", 1, 0)
				}
			}
		case len(s.paths) > 0:
			w.line(1, "(data updated: "+strings.Join(s.paths, ", ")+")")
		default:
			w.line(1, "(empty)")
		}
	}
	return w.String()
}

type textSurface struct {
	comps   map[string]map[string]any
	order   []string
	data    any
	paths   []string
	created bool
	deleted bool
}

// tops are the components no other component of the surface names.
func (s *textSurface) tops() []string {
	named := map[string]bool{}
	for _, c := range s.comps {
		for _, id := range childIDs(c) {
			named[id] = true
		}
	}
	var out []string
	for _, id := range s.order {
		if !named[id] {
			out = append(out, id)
		}
	}
	return out
}

// childIDs are the ids a component names as its children.
func childIDs(c map[string]any) []string {
	var out []string
	for _, k := range []string{"child", "trigger", "content"} {
		if s, ok := c[k].(string); ok {
			out = append(out, s)
		}
	}
	switch ch := c["children"].(type) {
	case []any:
		for _, e := range ch {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	case map[string]any:
		if s, ok := ch["componentId"].(string); ok {
			out = append(out, s)
		}
	}
	if tabs, ok := c["tabs"].([]any); ok {
		for _, t := range tabs {
			if m, ok := t.(map[string]any); ok {
				if s, ok := m["child"].(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// textWriter collects indented lines up to MaxTextBytes.
type textWriter struct {
	b    strings.Builder
	full bool
	// bullet starts the next line (a list item's first).
	bullet string
}

func (w *textWriter) line(indent int, s string) {
	s = strings.TrimRight(s, " ")
	if w.full || s == "" {
		return
	}
	if w.b.Len()+2*indent+len(s)+1 > MaxTextBytes {
		w.b.WriteString("...\n")
		w.full = true
		return
	}
	w.b.WriteString(strings.Repeat("  ", indent))
	w.b.WriteString(w.bullet)
	w.bullet = ""
	w.b.WriteString(s)
	w.b.WriteByte('\n')
}

func (w *textWriter) String() string { return strings.TrimRight(w.b.String(), "\n") }

// textRender draws one surface's components.
type textRender struct {
	s    *textSurface
	w    *textWriter
	seen map[string]bool // on the current path: a cycle stops
}

// node draws component id in scope (a data path for relative bindings).
func (r *textRender) node(id, scope string, indent, depth int) {
	c, ok := r.s.comps[id]
	if !ok || r.seen[id] || depth > MaxTreeDepth || r.w.full {
		return
	}
	r.seen[id] = true
	defer delete(r.seen, id)
	str := func(k string) string { return r.str(c[k], scope) }
	switch c["component"] {
	case "Text":
		t := str("text")
		if v, _ := c["variant"].(string); len(v) == 2 && v[0] == 'h' {
			t = strings.Repeat("#", int(v[1]-'0')) + " " + t
		}
		for _, l := range strings.Split(t, "\n") {
			r.w.line(indent, l)
		}
	case "Image":
		r.w.line(indent, "[image: "+nonEmpty(str("description"), str("url"))+"]")
	case "Video":
		r.w.line(indent, "[video: "+str("url")+"]")
	case "AudioPlayer":
		r.w.line(indent, "[audio: "+nonEmpty(str("description"), str("url"))+"]")
	case "Icon":
	case "Divider":
		r.w.line(indent, "---")
	case "Card", "Column":
		r.children(c, scope, indent, depth, "")
	case "Row":
		if l := r.inline(c, scope); l != "" {
			r.w.line(indent, l)
			return
		}
		r.children(c, scope, indent, depth, "")
	case "List":
		r.children(c, scope, indent, depth, "- ")
	case "Tabs":
		tabs, _ := c["tabs"].([]any)
		for _, t := range tabs {
			m, _ := t.(map[string]any)
			r.w.line(indent, "["+r.str(m["title"], scope)+"]")
			if ch, ok := m["child"].(string); ok {
				r.node(ch, scope, indent+1, depth+1)
			}
		}
	case "Modal":
		if t, ok := c["trigger"].(string); ok {
			r.node(t, scope, indent, depth+1)
		}
	case "Button":
		r.w.line(indent, "["+r.label(c, scope)+"]")
	case "TextField":
		r.w.line(indent, str("label")+": "+nonEmpty(str("value"), "____"))
	case "CheckBox":
		mark := "[ ]"
		if r.bool(c["value"], scope) {
			mark = "[x]"
		}
		r.w.line(indent, mark+" "+str("label"))
	case "ChoicePicker":
		picked := r.list(c["value"], scope)
		var opts []string
		list, _ := c["options"].([]any)
		for _, o := range list {
			m, _ := o.(map[string]any)
			v, _ := m["value"].(string)
			mark := "( )"
			if picked[v] {
				mark = "(x)"
			}
			opts = append(opts, mark+" "+r.str(m["label"], scope))
		}
		r.w.line(indent, strings.TrimPrefix(str("label")+": "+strings.Join(opts, "  "), ": "))
	case "Slider":
		r.w.line(indent, fmt.Sprintf("%s: %s (%s to %s)", str("label"), str("value"), nonEmpty(r.str(c["min"], ""), "0"), r.str(c["max"], "")))
	case "DateTimeInput":
		r.w.line(indent, nonEmpty(str("label"), "date")+": "+nonEmpty(str("value"), "____"))
	}
}

// children draws a container's children, each prefixed by bullet.
func (r *textRender) children(c map[string]any, scope string, indent, depth int, bullet string) {
	draw := func(id, scope string) {
		r.w.bullet = bullet
		r.node(id, scope, indent, depth+1)
		r.w.bullet = ""
	}
	if ch, ok := c["child"].(string); ok {
		draw(ch, scope)
	}
	switch ch := c["children"].(type) {
	case []any:
		for _, e := range ch {
			if id, ok := e.(string); ok {
				draw(id, scope)
			}
		}
	case map[string]any:
		id, _ := ch["componentId"].(string)
		path, _ := ch["path"].(string)
		abs := resolvePath(path, scope)
		items, _ := getPointer(r.s.data, abs).([]any)
		for i := range items {
			draw(id, abs+"/"+strconv.Itoa(i))
		}
	}
}

// inline is a Row of leaves as one line ("" when a child is a container).
func (r *textRender) inline(c map[string]any, scope string) string {
	ids, ok := c["children"].([]any)
	if !ok {
		return ""
	}
	var parts []string
	for _, e := range ids {
		id, _ := e.(string)
		ch, ok := r.s.comps[id]
		if !ok {
			continue
		}
		switch ch["component"] {
		case "Text":
			parts = append(parts, r.str(ch["text"], scope))
		case "Button":
			parts = append(parts, "["+r.label(ch, scope)+"]")
		case "Icon", "Divider":
		default:
			return ""
		}
	}
	return strings.Join(parts, "  ")
}

// label is a button's text: its child's.
func (r *textRender) label(c map[string]any, scope string) string {
	id, _ := c["child"].(string)
	ch := r.s.comps[id]
	if ch == nil {
		return "button"
	}
	if t, ok := ch["text"]; ok {
		return r.str(t, scope)
	}
	if n, ok := ch["name"].(string); ok {
		return n
	}
	return "button"
}

// str resolves a dynamic value to text.
func (r *textRender) str(v any, scope string) string {
	switch t := v.(type) {
	case nil, string, json.Number, bool:
		return scalar(t)
	case map[string]any:
		if _, ok := t["path"].(string); ok {
			return scalar(r.resolve(t, scope))
		}
		if t["call"] == "formatString" {
			args, _ := t["args"].(map[string]any)
			if s, ok := args["value"].(string); ok {
				return interpolation.ReplaceAllStringFunc(s, func(m string) string {
					return scalar(getPointer(r.s.data, resolvePath(m[2:len(m)-1], scope)))
				})
			}
		}
	}
	return ""
}

var interpolation = regexp.MustCompile(`\$\{[^${}()]*\}`)

// resolve is v, or the data model's value when v is a binding {"path"}.
func (r *textRender) resolve(v any, scope string) any {
	if m, ok := v.(map[string]any); ok {
		if p, ok := m["path"].(string); ok {
			return getPointer(r.s.data, resolvePath(p, scope))
		}
	}
	return v
}

func (r *textRender) bool(v any, scope string) bool {
	b, _ := r.resolve(v, scope).(bool)
	return b
}

func (r *textRender) list(v any, scope string) map[string]bool {
	out := map[string]bool{}
	l, _ := r.resolve(v, scope).([]any)
	for _, e := range l {
		if s, ok := e.(string); ok {
			out[s] = true
		}
	}
	return out
}

// scalar is a data model value as text: objects and lists as JSON.
func scalar(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return t.String()
	case bool:
		return strconv.FormatBool(t)
	}
	return string(compact(v))
}

// resolvePath makes a binding's path absolute: a relative one is inside
// scope (a template's item).
func resolvePath(p, scope string) string {
	if strings.HasPrefix(p, "/") {
		return p
	}
	return scope + "/" + p
}

func nonEmpty(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// clone copies a decoded JSON value.
func clone(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = clone(e)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = clone(e)
		}
		return l
	}
	return v
}
