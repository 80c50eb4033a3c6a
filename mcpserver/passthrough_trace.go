package mcpserver

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel/trace"
)

// Trace context through the pass-through (SEP-414): a request forwarded
// upstream carries the W3C trace context of the span wunder serves it
// under (the gateway's request span, when traces are on) in
// params._meta, so the upstream's spans join wunder's trace over any
// transport. The keys are spliced into the message's bytes where they
// belong; nothing else of the message is re-encoded. A request whose
// _meta already has a traceparent goes unchanged: the caller's own trace
// context is the one the upstream continues. Without a span (traces off)
// the message is forwarded untouched, at no cost.

// withTraceContext returns body, a JSON-RPC request already read as one,
// with ctx's trace context in params._meta; body itself when there is
// nothing to add or the message is not shaped for it.
func withTraceContext(ctx context.Context, body []byte) []byte {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return body
	}
	// The W3C form, as propagation.TraceContext writes it (version 00);
	// hex digits need no JSON escaping, and a tracestate is printable
	// ASCII, which strconv.Quote escapes as JSON does.
	fields := `"traceparent":"00-` + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String() + `"`
	if ts := sc.TraceState().String(); ts != "" {
		fields += `,"tracestate":` + strconv.Quote(ts)
	}
	ps, pe, ok := member(body, 0, "params")
	if !ok {
		// No params: add them as the envelope's last member.
		end := lastByte(body, '}')
		if end < 0 {
			return body
		}
		return splice(body, end, end, `,"params":{"_meta":{`+fields+`}}`)
	}
	switch body[ps] {
	case 'n': // null
		return splice(body, ps, pe, `{"_meta":{`+fields+`}}`)
	case '{':
	default:
		return body // not an object: the upstream refuses it as it is
	}
	ms, me, ok := member(body, ps, "_meta")
	if !ok {
		return splice(body, ps+1, ps+1, `"_meta":{`+fields+`}`+comma(body, ps))
	}
	switch body[ms] {
	case 'n':
		return splice(body, ms, me, `{`+fields+`}`)
	case '{':
		if _, _, has := member(body, ms, "traceparent"); has {
			return body
		}
		return splice(body, ms+1, ms+1, fields+comma(body, ms))
	}
	return body
}

// comma is "," when the object starting at b[at] has members.
func comma(b []byte, at int) string {
	if i := skipSpace(b, at+1); i < len(b) && b[i] != '}' {
		return ","
	}
	return ""
}

// splice returns b with b[from:to] replaced by s, in a new slice.
func splice(b []byte, from, to int, s string) []byte {
	out := make([]byte, 0, len(b)-(to-from)+len(s))
	out = append(out, b[:from]...)
	out = append(out, s...)
	return append(out, b[to:]...)
}

func lastByte(b []byte, c byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == c {
			return i
		}
	}
	return -1
}

// member finds, in the JSON object that starts at b[at] (after any
// space), the value of the top-level member key, compared as its raw
// bytes: the value's start and end offsets in b. b is valid JSON (it was
// decoded already); ok is false when the object has no such member.
func member(b []byte, at int, key string) (start, end int, ok bool) {
	i := skipSpace(b, at)
	if i >= len(b) || b[i] != '{' {
		return 0, 0, false
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return 0, 0, false // '}' or malformed
		}
		ks := i
		i = skipString(b, i)
		k := b[ks+1 : max(ks+1, i-1)]
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return 0, 0, false
		}
		vs := skipSpace(b, i+1)
		ve := skipValue(b, vs)
		if ve < 0 {
			return 0, 0, false
		}
		if string(k) == key {
			return vs, ve, true
		}
		i = skipSpace(b, ve)
		if i >= len(b) || b[i] != ',' {
			return 0, 0, false
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset after the string that starts at b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the offset after the value that starts at b[i], -1
// when b ends first.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}
