package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// renamed lists the keys of the original wunder whose name or place changed.
// The old spelling still loads, with a warning; a file that sets both
// spellings is an error. "*" stands for any map key (a model name).
var renamed = []struct{ old, new string }{
	{"server.max_active_sessions", "concurrency.max_active_runs"},
	{"llm.models.*.enable", "llm.models.*.enabled"},
	{"observability.monitor_payload_max_chars", "observability.event_payload_max_chars"},
	{"observability.monitor_drop_event_types", "observability.drop_event_types"},
	// wunder's own earlier places of the performance knobs.
	{"observability.blocking_event_delay_ms", "tuning.blocking_event_delay_ms"},
	{"observability.stream_event_delay_ms", "tuning.stream_event_delay_ms"},
	{"observability.tool_log_delay_ms", "tuning.tool_log_delay_ms"},
	{"server.gc_min_heap_mb", "tuning.gc_min_heap_mb"},
}

// renameDeprecated moves the deprecated keys of one file's tree to their
// current place. It runs per file, before files are merged, so that an
// override file may use either spelling.
func (l *loader) renameDeprecated(root *yaml.Node) {
	for _, r := range renamed {
		oldSegs := strings.Split(r.old, ".")
		newSegs := strings.Split(r.new, ".")
		type match struct {
			parent *yaml.Node
			key    *yaml.Node
			wild   []string
		}
		var matches []match
		var find func(n *yaml.Node, segs, wild []string)
		find = func(n *yaml.Node, segs, wild []string) {
			if n == nil || n.Kind != yaml.MappingNode {
				return
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				switch {
				case segs[0] != "*" && k.Value != segs[0]:
					continue
				case len(segs) == 1:
					matches = append(matches, match{n, k, wild})
				case segs[0] == "*":
					find(n.Content[i+1], segs[1:], append(wild[:len(wild):len(wild)], k.Value))
				default:
					find(n.Content[i+1], segs[1:], wild)
				}
			}
		}
		find(root, oldSegs, nil)
		for _, m := range matches {
			oldPath := fillPath(oldSegs, m.wild)
			newFull := fillSegs(newSegs, m.wild)
			newPath := fillPath(newSegs, m.wild)
			at := l.at(m.key)
			target := l.ensureMapping(root, newFull[:len(newFull)-1], m.key)
			if target == nil {
				l.probs.add(oldPath, at, "deprecated spelling of %s, which cannot be set here", newPath)
				continue
			}
			last := newFull[len(newFull)-1]
			if mappingIndex(target, last) >= 0 {
				l.probs.add(oldPath, at, "deprecated spelling of %s, which is also set: remove %s", newPath, oldPath)
				continue
			}
			i := indexOfNode(m.parent, m.key)
			if i < 0 {
				continue
			}
			v := m.parent.Content[i+1]
			m.parent.Content = append(m.parent.Content[:i], m.parent.Content[i+2:]...)
			k := l.shallow(l.files[m.key], m.key)
			k.Value = last
			target.Content = append(target.Content, k, v)
			l.warnings = append(l.warnings, fmt.Sprintf("%s: %s is deprecated; use %s", formatOrigin(at), oldPath, newPath))
		}
	}
}

// ensureMapping walks (and creates) the mappings named by segs from root and
// returns the last one, or nil when a value on the way is not a mapping.
// New nodes take their file and line from like.
func (l *loader) ensureMapping(root *yaml.Node, segs []string, like *yaml.Node) *yaml.Node {
	n := root
	for _, s := range segs {
		j := mappingIndex(n, s)
		if j < 0 {
			k := l.shallow(l.files[like], like)
			k.Value, k.Tag, k.Style = s, "!!str", 0
			child := l.register(l.files[like], &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: like.Line, Column: like.Column})
			n.Content = append(n.Content, k, child)
			n = child
			continue
		}
		child := n.Content[j+1]
		if isNull(child) {
			child = l.register(l.files[like], &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: child.Line, Column: child.Column})
			n.Content[j+1] = child
		}
		if child.Kind != yaml.MappingNode {
			return nil
		}
		n = child
	}
	return n
}

func indexOfNode(m *yaml.Node, key *yaml.Node) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i] == key {
			return i
		}
	}
	return -1
}

// fillSegs replaces the "*" segments by the matched keys, in order.
func fillSegs(segs, wild []string) []string {
	out := make([]string, len(segs))
	w := 0
	for i, s := range segs {
		if s == "*" && w < len(wild) {
			s = wild[w]
			w++
		}
		out[i] = s
	}
	return out
}

func fillPath(segs, wild []string) string {
	path := ""
	for _, s := range fillSegs(segs, wild) {
		path = joinPath(path, s)
	}
	return path
}

// formatOrigin is "file:line", "file", "WUNDER_X" or "default".
func formatOrigin(o origin) string {
	switch {
	case o.source == "":
		return "default"
	case o.line > 0:
		return fmt.Sprintf("%s:%d", o.source, o.line)
	default:
		return o.source
	}
}
