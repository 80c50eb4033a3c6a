package a2ui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// component checks one component of an updateComponents message against
// the basic catalog and returns its id ("" when it has none) and the
// component ids its properties name.
func (c *checker) component(at string, v any) (string, []ref) {
	obj, ok := v.(map[string]any)
	if !ok {
		c.fail(at, "must be an object such as {\"id\":\"root\",\"component\":\"Text\",\"text\":\"Hello\"}, not %s", typeName(v))
		return "", nil
	}
	var id string
	if v, ok := obj["id"]; ok {
		id = c.id(at+".id", v)
	} else {
		c.fail(at, "id is required")
	}
	name, isString := obj["component"].(string)
	props, known := components[name]
	switch {
	case obj["component"] == nil:
		for _, k := range sortedKeys(obj) {
			if _, ok := components[k]; ok {
				// {"Text": {...}}, the shape of older examples
				c.fail(at, "names its type as a key (%q): in v0.9 write {\"id\": ..., \"component\": %q, ...its properties}", k, k)
				return id, nil
			}
		}
		c.fail(at, "component is required: the component's type, one of %s", strings.Join(ComponentNames(), ", "))
		return id, nil
	case !isString:
		if m, ok := obj["component"].(map[string]any); ok && len(m) == 1 {
			for k := range m {
				// {"component": {"Text": {...}}}, A2UI v0.8
				c.fail(at+".component", "is in the v0.8 shape {%q: {...}}: in v0.9 write \"component\": %q with its properties beside id", k, k)
			}
			return id, nil
		}
		c.fail(at+".component", "must be the component's type as a string, one of %s", strings.Join(ComponentNames(), ", "))
		return id, nil
	case !known:
		c.fail(at+".component", "%s is not a component of the basic catalog (%s)", show(name), strings.Join(ComponentNames(), ", "))
		return id, nil
	}
	var refs []ref
	for _, k := range sortedKeys(obj) {
		pat := at + "." + k
		pr, ok := props[k]
		if !ok {
			pr, ok = common[k]
		}
		if !ok {
			c.fail(pat, "%s has no property %q (it has %s, and id, accessibility, weight)", name, k, strings.Join(propNames(name), ", "))
			continue
		}
		refs = append(refs, c.value(pat, pr, obj[k])...)
	}
	for _, k := range propNames(name) {
		if _, ok := obj[k]; !ok && props[k].required {
			c.fail(at, "%s needs %q", name, k)
		}
	}
	return id, refs
}

// value checks a property's value by its kind, returning the component
// ids it names.
func (c *checker) value(at string, pr prop, v any) []ref {
	switch pr.kind {
	case kString:
		c.dynamic(at, v, "string", func(v any) bool { _, ok := v.(string); return ok })
	case kNumber:
		c.dynamic(at, v, "number", isNumber)
	case kBool:
		c.dynamic(at, v, "boolean", func(v any) bool { _, ok := v.(bool); return ok })
	case kStringList:
		c.dynamic(at, v, "list of strings", func(v any) bool {
			l, ok := v.([]any)
			return ok && !slices.ContainsFunc(l, func(e any) bool { _, ok := e.(string); return !ok })
		})
	case kValue:
		c.dynamic(at, v, "value", func(v any) bool { _, obj := v.(map[string]any); return v != nil && !obj })
	case kID:
		if id := c.id(at, v); id != "" {
			return []ref{{at, id}}
		}
	case kChildren:
		return c.children(at, v)
	case kEnum:
		if s, ok := v.(string); !ok || !slices.Contains(pr.enum, s) {
			c.fail(at, "must be one of %s, not %s", strings.Join(pr.enum, ", "), show(v))
		}
	case kLitString:
		if _, ok := v.(string); !ok {
			c.fail(at, "must be a string, not %s", typeName(v))
		}
	case kLitNumber:
		if !isNumber(v) {
			c.fail(at, "must be a number, not %s", typeName(v))
		}
	case kLitBool:
		if _, ok := v.(bool); !ok {
			c.fail(at, "must be a boolean, not %s", typeName(v))
		}
	case kAction:
		c.action(at, v)
	case kChecks:
		c.checks(at, v)
	case kOptions:
		c.options(at, v)
	case kTabs:
		return c.tabs(at, v)
	case kIconName:
		c.icon(at, v)
	case kAccessibility:
		obj, ok := v.(map[string]any)
		if !ok {
			c.fail(at, "must be an object {label, description}, not %s", typeName(v))
			return nil
		}
		c.allowed(at, obj, "label", "description")
		for _, k := range []string{"label", "description"} {
			if v, ok := obj[k]; ok {
				c.value(at+"."+k, prop{kind: kString}, v)
			}
		}
	}
	return nil
}

// dynamic checks a Dynamic* value: a literal (lit says which), a data
// binding {"path"}, or a function call.
func (c *checker) dynamic(at string, v any, what string, lit func(any) bool) {
	obj, ok := v.(map[string]any)
	switch {
	case lit(v):
	case ok && obj["path"] != nil:
		c.binding(at, obj)
	case ok && obj["call"] != nil:
		c.call(at, obj)
	default:
		c.fail(at, "must be a %s, a data binding {\"path\": \"/...\"} or a function call {\"call\": ...}, not %s", what, typeName(v))
	}
}

// binding checks {"path": "..."}.
func (c *checker) binding(at string, obj map[string]any) {
	c.allowed(at, obj, "path")
	if s, ok := obj["path"].(string); !ok || s == "" {
		c.fail(at+".path", "must be a JSON Pointer such as \"/user/name\" (or a relative path inside a template), not %s", show(obj["path"]))
	}
}

// call checks a FunctionCall of the basic catalog.
func (c *checker) call(at string, obj map[string]any) {
	c.allowed(at, obj, "call", "args", "returnType")
	name, _ := obj["call"].(string)
	need, ok := functions[name]
	if !ok {
		c.fail(at+".call", "%s is not a function of the basic catalog (%s)", show(obj["call"]), strings.Join(FunctionNames(), ", "))
		return
	}
	if rt, ok := obj["returnType"]; ok {
		if s, _ := rt.(string); !slices.Contains(returnTypes, s) {
			c.fail(at+".returnType", "must be one of %s, not %s", strings.Join(returnTypes, ", "), show(rt))
		}
	}
	args, ok := obj["args"].(map[string]any)
	if !ok {
		c.fail(at, "%s needs args: an object with %s", name, strings.Join(need, ", "))
		return
	}
	for _, k := range need {
		if _, ok := args[k]; !ok {
			c.fail(at+".args", "%s needs %q", name, k)
		}
	}
	// Arguments that are function calls themselves (and, or, nested
	// formatting) are checked too.
	for _, k := range sortedKeys(args) {
		c.nested(at+".args."+k, args[k])
	}
}

// nested checks the function calls inside an argument.
func (c *checker) nested(at string, v any) {
	switch t := v.(type) {
	case map[string]any:
		if t["call"] != nil {
			c.call(at, t)
		}
	case []any:
		for i, e := range t {
			c.nested(fmt.Sprintf("%s[%d]", at, i), e)
		}
	}
}

// children checks a ChildList.
func (c *checker) children(at string, v any) []ref {
	switch t := v.(type) {
	case []any:
		var refs []ref
		for i, e := range t {
			if id := c.id(fmt.Sprintf("%s[%d]", at, i), e); id != "" {
				refs = append(refs, ref{fmt.Sprintf("%s[%d]", at, i), id})
			}
		}
		return refs
	case map[string]any:
		c.allowed(at, t, "componentId", "path")
		if s, ok := t["path"].(string); !ok || s == "" {
			c.fail(at, "a template needs path: the data model list to repeat componentId for, e.g. \"/items\"")
		}
		if id := c.id(at+".componentId", t["componentId"]); id != "" {
			return []ref{{at + ".componentId", id}}
		}
		return nil
	}
	c.fail(at, "must be a list of component ids, or a template {\"componentId\", \"path\"}, not %s (children are named by id, never written inline)", typeName(v))
	return nil
}

// action checks an Action.
func (c *checker) action(at string, v any) {
	obj, ok := v.(map[string]any)
	if !ok {
		c.fail(at, "must be {\"event\": {\"name\": ..., \"context\": {...}}} or {\"functionCall\": {...}}, not %s", typeName(v))
		return
	}
	c.allowed(at, obj, "event", "functionCall")
	switch {
	case obj["event"] != nil && obj["functionCall"] != nil:
		c.fail(at, "has both event and functionCall: give one")
	case obj["event"] != nil:
		ev, ok := obj["event"].(map[string]any)
		if !ok {
			c.fail(at+".event", "must be an object {name, context}, not %s", typeName(obj["event"]))
			return
		}
		c.allowed(at+".event", ev, "name", "context")
		if s, ok := ev["name"].(string); !ok || s == "" {
			c.fail(at+".event", "name is required: the action's name, as the server receives it")
		}
		if cx, ok := ev["context"]; ok {
			m, ok := cx.(map[string]any)
			if !ok {
				c.fail(at+".event.context", "must be an object, not %s", typeName(cx))
				return
			}
			for _, k := range sortedKeys(m) {
				c.value(at+".event.context."+k, prop{kind: kValue}, m[k])
			}
		}
	case obj["functionCall"] != nil:
		fc, ok := obj["functionCall"].(map[string]any)
		if !ok {
			c.fail(at+".functionCall", "must be a function call object, not %s", typeName(obj["functionCall"]))
			return
		}
		c.call(at+".functionCall", fc)
	default:
		c.fail(at, "needs event or functionCall")
	}
}

// objects checks that v is a list of objects with only the keys allowed
// (nonEmpty: at least one), each of which each checks at its own path;
// shape names the objects in the errors, as {key, ...}.
func (c *checker) objects(at string, v any, nonEmpty bool, allowed []string, each func(eat string, obj map[string]any)) {
	list, ok := v.([]any)
	shape := "{" + strings.Join(allowed, ", ") + "}"
	if !ok || (nonEmpty && len(list) == 0) {
		what := "a list"
		if nonEmpty {
			what = "a non-empty list"
		}
		c.fail(at, "must be %s of %s, not %s", what, shape, typeName(v))
		return
	}
	for i, e := range list {
		eat := fmt.Sprintf("%s[%d]", at, i)
		obj, ok := e.(map[string]any)
		if !ok {
			c.fail(eat, "must be an object %s, not %s", shape, typeName(e))
			continue
		}
		c.allowed(eat, obj, allowed...)
		each(eat, obj)
	}
}

// checks checks a list of CheckRule.
func (c *checker) checks(at string, v any) {
	c.objects(at, v, false, []string{"condition", "message"}, func(eat string, obj map[string]any) {
		if _, ok := obj["message"].(string); !ok {
			c.fail(eat, "message is required: what the user reads when the check fails")
		}
		if cond, ok := obj["condition"]; ok {
			c.value(eat+".condition", prop{kind: kBool}, cond)
		} else {
			c.fail(eat, "condition is required: a boolean, a binding or a function call such as {\"call\":\"required\",\"args\":{\"value\":{\"path\":\"/x\"}}}")
		}
	})
}

// options checks ChoicePicker options.
func (c *checker) options(at string, v any) {
	c.objects(at, v, false, []string{"label", "value"}, func(eat string, obj map[string]any) {
		if l, ok := obj["label"]; ok {
			c.value(eat+".label", prop{kind: kString}, l)
		} else {
			c.fail(eat, "label is required")
		}
		if _, ok := obj["value"].(string); !ok {
			c.fail(eat, "value is required: a string")
		}
	})
}

// tabs checks Tabs' tabs and returns their children.
func (c *checker) tabs(at string, v any) []ref {
	var refs []ref
	c.objects(at, v, true, []string{"title", "child"}, func(eat string, obj map[string]any) {
		if t, ok := obj["title"]; ok {
			c.value(eat+".title", prop{kind: kString}, t)
		} else {
			c.fail(eat, "title is required")
		}
		if id := c.id(eat+".child", obj["child"]); id != "" {
			refs = append(refs, ref{eat + ".child", id})
		}
	})
	return refs
}

// icon checks an Icon's name.
func (c *checker) icon(at string, v any) {
	switch t := v.(type) {
	case string:
		if !isIcon(t) {
			c.fail(at, "%s is not an icon of the basic catalog (e.g. %s)", show(v), strings.Join(iconNames[:12], ", "))
		}
	case map[string]any:
		switch {
		case t["path"] != nil:
			c.binding(at, t)
		case t["svgPath"] != nil:
			c.allowed(at, t, "svgPath")
			if _, ok := t["svgPath"].(string); !ok {
				c.fail(at+".svgPath", "must be a string")
			}
		default:
			c.fail(at, "must be an icon name, {\"svgPath\"} or a binding {\"path\"}")
		}
	default:
		c.fail(at, "must be an icon name, not %s", typeName(v))
	}
}

func isNumber(v any) bool {
	switch v.(type) {
	case json.Number, float64:
		return true
	}
	return false
}
