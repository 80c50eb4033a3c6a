package orchestrator

import (
	"encoding/json"
	"strconv"
	"time"
)

// AppendJSON appends the event's JSON to dst, without json.Marshal's
// reflection and without its second pass over Data when Data is already
// in the form Marshal writes (compact, with <, >, &, U+2028 and U+2029
// escaped), as every payload the event log makes is. For valid Data it
// gives the bytes, and the errors, json.Marshal gives. Data is checked
// only when it has to be rewritten (a payload a store gives back
// reformatted): invalid Data already in that form is copied as it is.
// Streams write every event they send with it.
func (e *Event) AppendJSON(dst []byte) ([]byte, error) {
	_, offset := e.Time.Zone()
	if y := e.Time.Year(); y < 0 || y > 9999 || offset <= -24*3600 || offset >= 24*3600 {
		b, err := json.Marshal(e) // Marshal's error for a time RFC 3339 cannot carry
		return append(dst, b...), err
	}
	dst = append(dst, `{"run_id":`...)
	dst = appendJSONString(dst, e.RunID)
	dst = append(dst, `,"session_id":`...)
	dst = appendJSONString(dst, e.SessionID)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, e.Seq, 10)
	dst = append(dst, `,"type":`...)
	dst = appendJSONString(dst, e.Type)
	dst = append(dst, `,"data":`...)
	switch {
	case e.Data == nil:
		dst = append(dst, "null"...)
	case inMarshalForm(e.Data):
		dst = append(dst, e.Data...)
	default:
		b, err := json.Marshal(e.Data)
		if err != nil {
			return dst, err
		}
		dst = append(dst, b...)
	}
	dst = append(dst, `,"time":"`...)
	dst = e.Time.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, `"}`...), nil
}

// appendJSONString appends s as a JSON string, as json.Marshal writes it.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// inMarshalForm reports whether the JSON value b is as json.Marshal
// would write a json.RawMessage holding it: no space outside strings,
// and none of the characters Marshal escapes for HTML.
func inMarshalForm(b []byte) bool {
	if len(b) == 0 {
		return false // not JSON: Marshal says why
	}
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '<' || c == '>' || c == '&':
			return false
		case c == 0xe2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2]&^1 == 0xa8: // U+2028, U+2029
			return false
		case in:
			if c == '\\' {
				i++
			} else if c == '"' {
				in = false
			}
		case c == '"':
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return false
		}
	}
	return !in
}
