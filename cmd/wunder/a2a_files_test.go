package main

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/wunder/wunder/internal/config"
)

// userTransport sends X-Wunder-User (the server has no key: the caller
// may name the user it acts for).
type userTransport struct{ user string }

func (u userTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Wunder-User", u.user)
	return http.DefaultTransport.RoundTrip(r)
}

// The files and data parts of an A2A message become files of the
// caller's workspace, on a real server: a2a-go clients (1.0 and 0.3) send
// a file with its bytes, a file by URL (fetched from a second server) and
// a data part; the model is told the paths (the fake model repeats what
// it was given); the workspace API lists and serves the files, one folder
// per message. A URL the server cannot fetch refuses the message with
// invalid params and leaves no file; a caller acting as another user
// fills that user's workspace, not the default one.
func TestA2AFilePartsInTheWorkspace(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.A2A.Server.UserID = "agent"
		c.A2A.Server.Files.AllowPrivate = true // the file server is on loopback
	})
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/notes/plan.md" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		_, _ = io.WriteString(w, "# Plan\n\nship it on Friday\n")
	}))
	t.Cleanup(files.Close)
	const csv = "a,b\n1,2\n"
	message := func() *sdk.Message {
		raw := sdk.NewRawPart([]byte(csv))
		raw.Filename, raw.MediaType = "report.csv", "text/csv"
		return sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("#attachments what do these say?"), raw,
			sdk.NewFileURLPart(sdk.URL(files.URL+"/notes/plan.md"), ""), sdk.NewDataPart(map[string]any{"rows": 2}))
	}

	card, err := agentcard.DefaultResolver.Resolve(t.Context(), s.url)
	if err != nil {
		t.Fatal(err)
	}
	c10, err := a2aclient.NewFromCard(t.Context(), card)
	if err != nil {
		t.Fatal(err)
	}
	card03, err := (&agentcard.Resolver{CardParser: a2av0.NewAgentCardParser()}).Resolve(t.Context(), s.url)
	if err != nil {
		t.Fatal(err)
	}
	c03, err := a2aclient.NewFromCard(t.Context(), card03, a2aclient.WithDefaultsDisabled(), a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{}))
	if err != nil {
		t.Fatal(err)
	}

	var seen []string // the message folders found so far
	for _, tc := range []struct {
		version string
		c       *a2aclient.Client
	}{{"1.0", c10}, {"0.3", c03}} {
		res, err := tc.c.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: message()})
		if err != nil {
			t.Fatalf("%s: %v", tc.version, err)
		}
		task := res.(*sdk.Task)
		if task.Status.State != sdk.TaskStateCompleted {
			t.Fatalf("%s: task %s", tc.version, task.Status.State)
		}
		dirs := workspaceNames(t, s, "agent", "attachments")
		if len(dirs) != len(seen)+1 {
			t.Fatalf("%s: folders %v after %v; want one more", tc.version, dirs, seen)
		}
		dir := "attachments/" + slices.DeleteFunc(dirs, func(d string) bool { return slices.Contains(seen, d) })[0]
		seen = append(seen, strings.TrimPrefix(dir, "attachments/"))
		if got := workspaceNames(t, s, "agent", dir); !slices.Equal(got, []string{"data-1.json", "plan.md", "report.csv"}) {
			t.Fatalf("%s: %s holds %v", tc.version, dir, got)
		}
		for name, want := range map[string]string{"report.csv": csv, "plan.md": "# Plan\n\nship it on Friday\n", "data-1.json": `{"rows":2}`} {
			if got := download(t, s, "agent", dir+"/"+name); got != want {
				t.Errorf("%s: %s/%s = %q, want %q", tc.version, dir, name, got, want)
			}
		}
		// The model read the files converted, and where they are.
		answer := statusText(task)
		for _, want := range []string{"[Attachment: report.csv", "ship it on Friday", `{"rows":2}`,
			"- " + dir + "/report.csv (text/csv, 8 B)", "- " + dir + "/plan.md (text/markdown", "- " + dir + "/data-1.json (data part 1, JSON)"} {
			if !strings.Contains(answer, want) {
				t.Errorf("%s: the model was not given %q:\n%s", tc.version, want, answer)
			}
		}
	}

	// A URL that cannot be fetched: invalid params, no task, no file.
	bad := sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("read it"), sdk.NewFileURLPart(sdk.URL(files.URL+"/gone.txt"), "text/plain"))
	_, err = c10.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: bad})
	if !errors.Is(err, sdk.ErrInvalidParams) || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "gone.txt") {
		t.Fatalf("a URL answering 404: %v; want invalid params naming the file and the status", err)
	}
	if got := workspaceNames(t, s, "agent", "attachments"); len(got) != len(seen) {
		t.Fatalf("folders after a refused message: %v, want %v", got, seen)
	}

	// Acting as bob: bob's workspace, not the default user's.
	cb, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithJSONRPCTransport(&http.Client{Transport: userTransport{"bob"}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cb.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser,
		sdk.NewTextPart("keep this"), sdk.NewDataPart(map[string]any{"owner": "bob"}))}); err != nil {
		t.Fatal(err)
	}
	if got := workspaceNames(t, s, "bob", "attachments"); len(got) != 1 {
		t.Fatalf("bob's folders: %v, want one", got)
	}
	if got := workspaceNames(t, s, "agent", "attachments"); len(got) != len(seen) {
		t.Fatalf("the default user's folders after bob's message: %v, want %v", got, seen)
	}
}

// workspaceNames lists the names in a folder of user's workspace, through
// the workspace API.
func workspaceNames(t *testing.T, s *server, user, dir string) []string {
	t.Helper()
	var l struct {
		Entries []struct{ Name string } `json:"entries"`
	}
	decodeInto(t, s.rest(t, "GET", "/wunder/workspace?"+url.Values{"user_id": {user}, "path": {dir}}.Encode(), "", nil), 200, &l)
	var out []string
	for _, e := range l.Entries {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return out
}

// download reads a file of user's workspace through the workspace API.
func download(t *testing.T, s *server, user, path string) string {
	t.Helper()
	r := s.rest(t, "GET", "/wunder/workspace/download?"+url.Values{"user_id": {user}, "path": {path}}.Encode(), "", nil)
	mustStatus(t, r, 200)
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// statusText is the text of a task's status message.
func statusText(task *sdk.Task) string {
	var b strings.Builder
	if task.Status.Message != nil {
		for _, p := range task.Status.Message.Parts {
			b.WriteString(p.Text())
		}
	}
	return b.String()
}
