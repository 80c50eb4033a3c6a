package a2a

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode"

	"github.com/wunder/wunder/internal/netguard"
	"github.com/wunder/wunder/orchestrator"
)

// Files of a message in the workspace (docs/a2a.md#files-and-data-parts).
//
// With [Options.Files], the files and data parts of a message that starts
// a task become files of the caller's workspace, in a folder of their own
// under FileOptions.Dir ("attachments/msg_<id>/"): a file under its name
// (cleaned to one path element), a data part as data-<n>.json. A file part
// given by an http(s) URL is fetched first (FileOptions.FetchURLs),
// through the SSRF guard (internal/netguard: checked when the URL is read
// and again at connect time), bounded by attachments.max_bytes and
// FileOptions.FetchTimeout, and is then an inline file like the others.
// The model reads the files converted (attachments.go), the data parts as
// JSON in the question, and one more text attachment that lists the saved
// paths, so its tools can open them.
//
// Every part is checked and fetched before anything is saved, and the
// files are saved before the run starts: a refused part leaves no task
// and no file, and a run that does not start removes the folder
// (discard). A folder that cannot be removed, after removeAttempts
// tries, is counted (FileOptions.CleanupFailed), logged, and said in the
// refusal, whose code and message otherwise stay as they were.

// FileStore keeps files in a user's workspace; cmd/wunder adapts the
// built-in tools' workspaces (the resolver, deny globs and quota of the
// workspace API, adapters/builtin).
type FileStore interface {
	// WriteFile writes data to the file at path, relative to userID's
	// workspace, creating its parents.
	WriteFile(ctx context.Context, userID, path string, data []byte) error
	// RemoveAll removes the entry at path and what it holds.
	RemoveAll(ctx context.Context, userID, path string) error
}

// FileOptions save the files and data parts of messages (files.go). Zero
// values mean the defaults stated.
type FileOptions struct {
	// Store keeps the files. Required.
	Store FileStore
	// Dir is the workspace folder holding one folder per message.
	// Default DefaultFilesDir.
	Dir string
	// FetchURLs fetches file parts given by an http(s) URL; false leaves
	// such a URL in the message's text, as before.
	FetchURLs bool
	// AllowPrivate lets those URLs be on private, loopback or link-local
	// addresses (the SSRF guard's opt-out; tests set it).
	AllowPrivate bool
	// FetchTimeout bounds one fetch, from the look-up of its host to its
	// last byte. Default 30s.
	FetchTimeout time.Duration
	// CleanupFailed is told of each message folder that stays in a
	// workspace because it could not be removed when its task did not
	// start (cmd/wunder counts them:
	// wunder_a2a_file_cleanup_failures_total). nil: not counted.
	CleanupFailed func()
}

// DefaultFilesDir is FileOptions.Dir's default.
const DefaultFilesDir = "attachments"

// maxDataParts bounds the data parts of one message saved as files.
const maxDataParts = 32

// maxNameBytes bounds a saved file's name (its extension kept).
const maxNameBytes = 120

// maxRedirects bounds the redirects a fetch follows (each dial passes the
// SSRF guard again).
const maxRedirects = 5

// removeAttempts bounds the tries to remove a message's folder, and
// removeBackoff is the wait after the first failed one, doubled after
// each (a file someone writes into the folder meanwhile, a transient
// error of the file system).
var (
	removeAttempts = 3
	removeBackoff  = 20 * time.Millisecond
)

// files saves messages' files; nil when Options.Files is.
type files struct {
	o   FileOptions
	hc  *http.Client
	log *slog.Logger
}

func newFiles(o FileOptions, log *slog.Logger) *files {
	if o.Dir == "" {
		o.Dir = DefaultFilesDir
	}
	o.Dir = strings.Trim(o.Dir, "/")
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = 30 * time.Second
	}
	f := &files{o: o, log: log}
	if o.FetchURLs {
		f.hc = &http.Client{Transport: netguard.Transport(o.FetchTimeout, o.AllowPrivate), Timeout: o.FetchTimeout,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) >= maxRedirects {
					return fmt.Errorf("more than %d redirects", maxRedirects)
				}
				if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
					return fmt.Errorf("a redirect to %s", req.URL.Scheme)
				}
				return nil
			}}
	}
	return f
}

// fetchable reports whether a file part by URL u is fetched.
func (f *files) fetchable(u string) bool {
	if f == nil || f.hc == nil {
		return false
	}
	l := strings.ToLower(u)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// fetch reads the file at raw, at most max bytes, for the part named
// name; it returns the bytes and the media type the server gives. Every
// failure is an invalid-params error naming the part.
func (f *files) fetch(ctx context.Context, name, raw string, max int64) ([]byte, string, error) {
	fail := func(format string, args ...any) ([]byte, string, error) {
		return nil, "", errParams("file %q: %s: %s", name, clipURL(raw), fmt.Sprintf(format, args...))
	}
	switch err := netguard.CheckURL(ctx, raw, f.o.AllowPrivate); {
	case errors.Is(err, netguard.ErrNotHTTP):
		return fail("not an absolute http(s) URL")
	case err != nil:
		return fail("%v", err) // blocked or unresolved: the guard says which
	}
	ctx, cancel := context.WithTimeout(ctx, f.o.FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return fail("%v", err)
	}
	resp, err := f.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is said once
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return fail("not fetched within %s", f.o.FetchTimeout)
		}
		return fail("not fetched: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fail("the server answered %s", resp.Status)
	}
	if resp.ContentLength > max {
		return fail("%d bytes, over the limit of %d (attachments.max_bytes)", resp.ContentLength, max)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fail("not fetched within %s", f.o.FetchTimeout)
	case err != nil:
		return fail("not fetched: %v", err)
	case int64(len(data)) > max:
		return fail("more than %d bytes, over the limit of %d (attachments.max_bytes)", max, max)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return data, mt, nil
}

// clipURL is a URL as errors show it: at most 200 bytes.
func clipURL(u string) string {
	if len(u) > 200 {
		return u[:200] + "..."
	}
	return u
}

// savedFile is a file of a message to save.
type savedFile struct {
	name, mediaType string
	data            []byte
	what            string // for the model: "data part 2, JSON"; "" = the media type and size
}

// save writes a message's files into a new folder of userID's workspace
// and returns the folder and the attachment that tells the model where
// they are. A file the workspace refuses (a denied name, the quota) is an
// invalid-params error naming it; the folder is removed then.
func (f *files) save(ctx context.Context, userID string, in []savedFile) (string, *orchestrator.Attachment, error) {
	if len(in) == 0 {
		return "", nil, nil
	}
	dir := path.Join(f.o.Dir, orchestrator.NewID("msg_"))
	used := map[string]bool{}
	var list strings.Builder
	list.WriteString("The files of this message are saved in your workspace:")
	for _, sf := range in {
		name := uniqueName(sf.name, used)
		p := path.Join(dir, name)
		if err := f.o.Store.WriteFile(ctx, userID, p, sf.data); err != nil {
			if errors.Is(err, orchestrator.ErrPermissionDenied) || errors.Is(err, orchestrator.ErrInvalidArgument) ||
				errors.Is(err, orchestrator.ErrConflict) {
				err = errParams("file %q not saved in the workspace: %v", sf.name, err)
			}
			return "", nil, f.discard(ctx, userID, dir, err)
		}
		what := sf.what
		if what == "" {
			what = formatSize(int64(len(sf.data)))
			if sf.mediaType != "" {
				what = sf.mediaType + ", " + what
			}
		}
		fmt.Fprintf(&list, "\n- %s (%s)", p, what)
	}
	text := list.String()
	return dir, &orchestrator.Attachment{Type: orchestrator.AttachmentText, Name: "workspace files", MimeType: "text/plain",
		Content: text, Size: int64(len(text))}, nil
}

// discard removes the folder dir of a message refused with cause (its
// task did not start; "" = nothing saved) and returns cause. A folder
// that stays after removeAttempts tries is counted and logged, and cause
// says so, its kind and message kept.
func (f *files) discard(ctx context.Context, userID, dir string, cause error) error {
	if f == nil || dir == "" {
		return cause
	}
	ctx = context.WithoutCancel(ctx) // a caller that went away leaves no files either
	var err error
	wait := removeBackoff
	for try := 1; ; try++ {
		err = f.o.Store.RemoveAll(ctx, userID, dir)
		if err == nil || errors.Is(err, orchestrator.ErrNotFound) {
			return cause
		}
		if try == removeAttempts {
			break
		}
		time.Sleep(wait)
		wait *= 2
	}
	if f.o.CleanupFailed != nil {
		f.o.CleanupFailed()
	}
	f.log.ErrorContext(ctx, "a2a: the files of a message whose task did not start stay in the workspace",
		"user_id", userID, "dir", dir, "attempts", removeAttempts, "err", err, "refusal", cause)
	return withFilesLeft(cause, dir)
}

// withFilesLeft is err, a refusal, saying that the message's folder dir
// stays in the caller's workspace; its kind and message are kept.
func withFilesLeft(err error, dir string) error {
	note := fmt.Sprintf(" (the files of this message stay in your workspace, in %s: they could not be removed)", dir)
	var ce *codeError
	if errors.As(err, &ce) {
		return &codeError{kind: ce.kind, msg: ce.msg + note}
	}
	return fmt.Errorf("%w%s", err, note)
}

// safeName is name as one path element of the workspace: its last
// element, without control characters, leading dots and spaces, at most
// maxNameBytes (the extension kept); fallback when nothing is left.
func safeName(name, fallback string) string {
	name = strings.ReplaceAll(name, `\`, "/")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return -1
		}
		return r
	}, name)
	name = strings.TrimLeft(strings.TrimSpace(name), ". ")
	if name == "" {
		return fallback
	}
	if len(name) > maxNameBytes {
		ext := path.Ext(name)
		if len(ext) > 16 {
			ext = ""
		}
		// A character cut in two is invalid UTF-8, dropped.
		name = strings.ToValidUTF8(name[:maxNameBytes-len(ext)], "") + ext
	}
	return name
}

// uniqueName is name, or name-2, name-3, ... before its extension when
// used already has it; it records the name it returns.
func uniqueName(name string, used map[string]bool) string {
	out := name
	ext := path.Ext(name)
	for i := 2; used[strings.ToLower(out)]; i++ {
		out = fmt.Sprintf("%s-%d%s", strings.TrimSuffix(name, ext), i, ext)
	}
	used[strings.ToLower(out)] = true
	return out
}

// fileFallback names the n-th file of a message that has no name, with an
// extension of its media type.
func fileFallback(n int, mediaType string) string {
	ext := ""
	if exts, _ := mime.ExtensionsByType(mediaType); len(exts) > 0 {
		ext = exts[0]
	}
	return fmt.Sprintf("file-%d%s", n, ext)
}

// formatSize is n bytes for a reader: 12 B, 3.4 KB, 5.6 MB.
func formatSize(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1000/1000)
}
