package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// decodeJSON reads a JSON object body into v. Each failure writes its own
// problem and returns false: 415 for another media type, 413 for a body over
// the limit (the body-limit middleware caps the reader), 400 invalid_json for
// malformed JSON or trailing data, 400 unknown_field for a field the endpoint
// does not know (a typo must not be silently ignored).
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	// A body must say it is JSON: a web page can post a body without a
	// type (a typeless Blob) cross-site, without a preflight.
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		writeProblem(w, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "the request has no Content-Type: send the body as application/json")
		return false
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		writeProblem(w, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "send the body as application/json")
		return false
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, err2 := dec.Token(); err2 != io.EOF {
			err = errors.New("unexpected data after the JSON object")
		}
	}
	if err == nil {
		return true
	}
	var tooLarge *http.MaxBytesError
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &tooLarge):
		writeProblem(w, r, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the body is larger than %d bytes", tooLarge.Limit))
	case errors.Is(err, os.ErrDeadlineExceeded):
		writeProblem(w, r, http.StatusRequestTimeout, "body_timeout", "the body did not arrive within server.read_timeout_s")
	case errors.Is(err, io.EOF):
		writeProblem(w, r, http.StatusBadRequest, "invalid_json", "the body is empty; send a JSON object")
	case errors.As(err, &syntax):
		writeProblem(w, r, http.StatusBadRequest, "invalid_json", fmt.Sprintf("malformed JSON at byte %d: %v", syntax.Offset, err))
	case errors.As(err, &typ):
		writeProblem(w, r, http.StatusBadRequest, "invalid_json", fmt.Sprintf("field %q must be %s, got %s", typ.Field, typ.Type, typ.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		writeProblem(w, r, http.StatusBadRequest, "unknown_field", strings.TrimPrefix(err.Error(), "json: ")+"; see docs/http.md for the fields")
	default:
		writeProblem(w, r, http.StatusBadRequest, "invalid_json", err.Error())
	}
	return false
}

// queryInt reads a non-negative integer query parameter (def when absent).
func queryInt(r *http.Request, name string, def, maxVal int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s must be a non-negative integer, got %q", name, s)
	}
	return min(n, maxVal), nil
}
