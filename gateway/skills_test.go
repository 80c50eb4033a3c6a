package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts/accountstest"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/orchestrator"
)

// fakeSkills records what the routes ask; uploads of "bad" are refused.
type fakeSkills struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeSkills) rec(format string, args ...any) {
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
	f.mu.Unlock()
}

func (f *fakeSkills) last() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return ""
	}
	return f.calls[len(f.calls)-1]
}

func (f *fakeSkills) AdminSkills(context.Context) (any, error) {
	f.rec("admin list")
	return map[string]any{"skills": []string{}}, nil
}
func (f *fakeSkills) SetAdminEnabled(_ context.Context, names []string) (any, error) {
	f.rec("admin enabled %v", names)
	return map[string]any{"enabled": names}, nil
}
func (f *fakeSkills) UserSkills(_ context.Context, user string) (any, error) {
	f.rec("list %s", user)
	return map[string]any{"user_id": user}, nil
}
func (f *fakeSkills) SetUserSkills(_ context.Context, user string, s gateway.SkillSettings) (any, error) {
	f.rec("set %s enabled=%v shared=%v preload=%v", user, s.Enabled != nil, s.Shared != nil, s.Preload != nil)
	return map[string]any{"user_id": user}, nil
}
func (f *fakeSkills) UploadSkill(_ context.Context, owner string, zip []byte) (any, error) {
	f.rec("upload %q %d", owner, len(zip))
	if string(zip) == "bad" {
		return nil, fmt.Errorf("%w: skill package: not a ZIP archive", orchestrator.ErrInvalidArgument)
	}
	return map[string]any{"name": "x"}, nil
}
func (f *fakeSkills) SkillContent(_ context.Context, owner, name string) (any, error) {
	f.rec("content %q %s", owner, name)
	if strings.Contains(name, "@") {
		return nil, fmt.Errorf("%w: you have no skill %q", orchestrator.ErrNotFound, name)
	}
	return map[string]any{"name": name}, nil
}
func (f *fakeSkills) DeleteSkill(_ context.Context, owner, name string) error {
	f.rec("delete %q %s", owner, name)
	return nil
}
func (f *fakeSkills) MaxUploadBytes() int64 { return 200 << 10 }

// upload builds a multipart body with the file field (when data is not
// nil) and extra fields.
func upload(t *testing.T, data []byte, fields ...string) (string, *bytes.Buffer) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for i := 0; i+1 < len(fields); i += 2 {
		_ = mw.WriteField(fields[i], fields[i+1])
	}
	if data != nil {
		w, _ := mw.CreateFormFile("file", "skill.zip")
		_, _ = w.Write(data)
	}
	_ = mw.Close()
	return mw.FormDataContentType(), &b
}

func TestSkillRoutes(t *testing.T) {
	t.Parallel()
	fs := &fakeSkills{}
	c := &clock{t: time.Now()}
	e := newEnv(t, envOpts{gw: gateway.Options{APIKey: adminKey, Skills: fs, MaxBodyBytes: 64 << 10, Auth: gateway.AuthOptions{
		Accounts: accountstest.NewMemStore(), TokenTTL: time.Hour, Now: c.now}}})
	ae := &authEnv{env: e, clock: c}
	ae.addUser(t, "alice", "alice-password")
	ae.addUser(t, "bob", "bob-password")
	alice, bob := bearer(ae.login(t, "alice", "alice-password").Token), bearer(ae.login(t, "bob", "bob-password").Token)
	admin := []string{"X-API-Key", adminKey}

	post := func(path string, hdr []string, data []byte, fields ...string) *http.Response {
		ct, body := upload(t, data, fields...)
		return e.do(t, "POST", path, body.String(), append(hdr, "Content-Type", ct)...)
	}

	// Admin routes: admins only.
	wantProblem(t, e.do(t, "GET", "/wunder/admin/skills", "", alice...), 403, "permission_denied")
	decode[map[string]any](t, e.do(t, "GET", "/wunder/admin/skills", "", admin...), 200)
	decode[map[string]any](t, e.do(t, "POST", "/wunder/admin/skills", `{"enabled":["a"]}`, admin...), 200)
	wantProblem(t, e.do(t, "POST", "/wunder/admin/skills", `{}`, admin...), 400, "invalid_argument")
	wantProblem(t, e.do(t, "POST", "/wunder/admin/skills", `{"enabled":[],"paths":["/etc"]}`, admin...), 400, "unknown_field")
	wantProblem(t, post("/wunder/admin/skills/upload", alice, []byte("zip")), 403, "permission_denied")
	// The admin route decides before it reads: no 415 for a body that
	// is not a form, no 400 for a broken one.
	wantProblem(t, e.do(t, "POST", "/wunder/admin/skills/upload", `{"file":"x"}`, alice...), 403, "permission_denied")
	wantProblem(t, e.do(t, "POST", "/wunder/admin/skills/upload", "--x\r\n", append(alice, "Content-Type", "multipart/form-data; boundary=x")...), 403, "permission_denied")
	decode[map[string]any](t, post("/wunder/admin/skills/upload", admin, []byte("zip")), 201)
	if got := fs.last(); got != `upload "" 3` {
		t.Errorf("admin upload: %s", got)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/admin/skills/content", "", admin...), 400, "invalid_argument")
	decode[map[string]any](t, e.do(t, "DELETE", "/wunder/admin/skills?name=x", "", admin...), 200)

	// User routes: one's own; bob naming alice is forbidden; an admin
	// names the user.
	decode[map[string]any](t, e.do(t, "GET", "/wunder/user_tools/skills", "", alice...), 200)
	if got := fs.last(); got != "list alice" {
		t.Errorf("alice's list: %s", got)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/user_tools/skills?user_id=alice", "", bob...), 403, "permission_denied")
	wantProblem(t, e.do(t, "POST", "/wunder/user_tools/skills", `{"user_id":"alice","enabled":[]}`, bob...), 403, "permission_denied")
	wantProblem(t, post("/wunder/user_tools/skills/upload", bob, []byte("zip"), "user_id", "alice"), 403, "permission_denied")
	wantProblem(t, e.do(t, "GET", "/wunder/user_tools/skills", "", admin...), 400, "missing_user_id")
	decode[map[string]any](t, e.do(t, "GET", "/wunder/user_tools/skills?user_id=alice", "", admin...), 200)
	decode[map[string]any](t, e.do(t, "POST", "/wunder/user_tools/skills", `{"enabled":["x"],"preload":[]}`, alice...), 200)
	if got := fs.last(); got != "set alice enabled=true shared=false preload=true" {
		t.Errorf("alice's settings: %s", got)
	}
	decode[map[string]any](t, post("/wunder/user_tools/skills/upload", admin, []byte("zip"), "user_id", "alice"), 201)
	if got := fs.last(); got != `upload "alice" 3` {
		t.Errorf("admin upload for alice: %s", got)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/user_tools/skills/content?name=alice@x", "", bob...), 404, "not_found")

	// Bad uploads: not multipart, no file, a refused package, too big;
	// the upload routes take more than the default body limit.
	wantProblem(t, e.do(t, "POST", "/wunder/user_tools/skills/upload", `{"file":"x"}`, alice...), 415, "unsupported_media_type")
	wantProblem(t, post("/wunder/user_tools/skills/upload", alice, nil, "name", "x"), 400, "missing_file")
	wantProblem(t, post("/wunder/user_tools/skills/upload", alice, []byte("bad")), 400, "invalid_argument")
	decode[map[string]any](t, post("/wunder/user_tools/skills/upload", alice, bytes.Repeat([]byte("z"), 150<<10)), 201)
	wantProblem(t, post("/wunder/user_tools/skills/upload", alice, bytes.Repeat([]byte("z"), 201<<10)), 413, "body_too_large")
	wantProblem(t, post("/wunder/user_tools/skills/upload", alice, bytes.Repeat([]byte("z"), 300<<10)), 413, "body_too_large")
	big := `{"enabled":["` + strings.Repeat("a", 70<<10) + `"]}`
	wantProblem(t, e.do(t, "POST", "/wunder/user_tools/skills", big, alice...), 413, "body_too_large")
}
