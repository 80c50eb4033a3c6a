package a2ui

import (
	"slices"
	"sort"
)

// The basic catalog of A2UI v0.9 (catalogs/basic/catalog.json), as the
// checks need it: each component's properties with their kind, which of
// them are required, and the functions a FunctionCall may name.

// kind is what a property holds.
type kind int

const (
	kString        kind = iota // DynamicString: a string, {path}, or a function call
	kNumber                    // DynamicNumber
	kBool                      // DynamicBoolean
	kStringList                // DynamicStringList
	kValue                     // DynamicValue: any literal, {path}, or a function call
	kID                        // ComponentId: a component of the surface
	kChildren                  // ChildList: ids, or {componentId, path} (a template)
	kEnum                      // a literal string among prop.enum
	kLitString                 // a literal string
	kLitNumber                 // a literal number
	kLitBool                   // a literal boolean
	kAction                    // Action: {event:{name, context}} or {functionCall}
	kChecks                    // a list of CheckRule {condition, message}
	kOptions                   // ChoicePicker options: [{label, value}]
	kTabs                      // Tabs: [{title, child}], at least one
	kIconName                  // an icon name, {svgPath}, or {path}
	kAccessibility             // {label, description}
)

// prop is one property of a component.
type prop struct {
	kind     kind
	required bool
	enum     []string
}

func p(k kind) prop            { return prop{kind: k} }
func req(k kind) prop          { return prop{kind: k, required: true} }
func enum(vals ...string) prop { return prop{kind: kEnum, enum: vals} }
func checkable(m map[string]prop) map[string]prop {
	m["checks"] = p(kChecks)
	return m
}

// common are the properties of every component (ComponentCommon and the
// catalog's CatalogComponentCommon).
var common = map[string]prop{
	"id":            req(kLitString),
	"component":     req(kLitString),
	"accessibility": p(kAccessibility),
	"weight":        p(kLitNumber),
}

// components are the basic catalog's, by name.
var components = map[string]map[string]prop{
	"Text": {"text": req(kString), "variant": enum("h1", "h2", "h3", "h4", "h5", "caption", "body")},
	"Image": {"url": req(kString), "description": p(kString),
		"fit":     enum("contain", "cover", "fill", "none", "scaleDown"),
		"variant": enum("icon", "avatar", "smallFeature", "mediumFeature", "largeFeature", "header")},
	"Icon":        {"name": req(kIconName)},
	"Video":       {"url": req(kString)},
	"AudioPlayer": {"url": req(kString), "description": p(kString)},
	"Row": {"children": req(kChildren),
		"justify": enum("center", "end", "spaceAround", "spaceBetween", "spaceEvenly", "start", "stretch"),
		"align":   enum("start", "center", "end", "stretch")},
	"Column": {"children": req(kChildren),
		"justify": enum("start", "center", "end", "spaceBetween", "spaceAround", "spaceEvenly", "stretch"),
		"align":   enum("center", "end", "start", "stretch")},
	"List": {"children": req(kChildren), "direction": enum("vertical", "horizontal"),
		"align": enum("start", "center", "end", "stretch")},
	"Card":    {"child": req(kID)},
	"Tabs":    {"tabs": req(kTabs)},
	"Modal":   {"trigger": req(kID), "content": req(kID)},
	"Divider": {"axis": enum("horizontal", "vertical")},
	"Button": checkable(map[string]prop{"child": req(kID), "action": req(kAction),
		"variant": enum("default", "primary", "borderless")}),
	"TextField": checkable(map[string]prop{"label": req(kString), "value": p(kString),
		"variant":          enum("longText", "number", "shortText", "obscured"),
		"validationRegexp": p(kLitString)}),
	"CheckBox": checkable(map[string]prop{"label": req(kString), "value": req(kBool)}),
	"ChoicePicker": checkable(map[string]prop{"label": p(kString), "options": req(kOptions), "value": req(kStringList),
		"variant":      enum("multipleSelection", "mutuallyExclusive"),
		"displayStyle": enum("checkbox", "chips"), "filterable": p(kLitBool)}),
	"Slider": checkable(map[string]prop{"label": p(kString), "min": p(kLitNumber), "max": req(kLitNumber), "value": req(kNumber)}),
	"DateTimeInput": checkable(map[string]prop{"value": req(kString), "enableDate": p(kLitBool), "enableTime": p(kLitBool),
		"min": p(kString), "max": p(kString), "label": p(kString)}),
}

// functions are the basic catalog's, with the arguments each requires.
var functions = map[string][]string{
	"required": {"value"}, "regex": {"value", "pattern"}, "length": {"value"}, "numeric": {"value"},
	"email": {"value"}, "formatString": {"value"}, "formatNumber": {"value"}, "formatCurrency": {"value", "currency"},
	"formatDate": {"value", "format"}, "pluralize": {"value", "other"}, "openUrl": {"url"},
	"and": {"values"}, "or": {"values"}, "not": {"value"},
}

// returnTypes are a FunctionCall's possible returnType values.
var returnTypes = []string{"string", "number", "boolean", "array", "object", "any", "void"}

// iconNames are the basic catalog's icon names.
var iconNames = []string{"accountCircle", "add", "arrowBack", "arrowForward", "attachFile", "calendarToday", "call",
	"camera", "check", "close", "delete", "download", "edit", "event", "error", "fastForward", "favorite", "favoriteOff",
	"folder", "help", "home", "info", "locationOn", "lock", "lockOpen", "mail", "menu", "moreVert", "moreHoriz",
	"notificationsOff", "notifications", "pause", "payment", "person", "phone", "photo", "play", "print", "refresh",
	"rewind", "search", "send", "settings", "share", "shoppingCart", "skipNext", "skipPrevious", "star", "starHalf",
	"starOff", "stop", "upload", "visibility", "visibilityOff", "volumeDown", "volumeMute", "volumeOff", "volumeUp", "warning"}

// ComponentNames lists the basic catalog's components, sorted.
func ComponentNames() []string { return sortedKeys(components) }

// FunctionNames lists the basic catalog's functions, sorted.
func FunctionNames() []string { return sortedKeys(functions) }

// propNames lists a component's properties besides the common ones,
// sorted.
func propNames(component string) []string { return sortedKeys(components[component]) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func isIcon(name string) bool { return slices.Contains(iconNames, name) }
