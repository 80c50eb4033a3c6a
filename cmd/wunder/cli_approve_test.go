package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// fakeTerminal is stdin as a person types it: isInteractive takes it for
// a terminal.
type fakeTerminal struct{ io.Reader }

func (fakeTerminal) IsTerminal() bool { return true }

// runCLIStdin runs the CLI with stdin.
func runCLIStdin(t *testing.T, ctx context.Context, stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = executeIn(ctx, args, stdin, &out, &errb)
	return code, out.String(), errb.String()
}

var runIDRe = regexp.MustCompile(`run (run_\S+) in session`)

// approvalsJSON is GET /wunder/runs/{run_id}/approvals of the run the CLI
// started (its id is on stderr).
func approvalsJSON(t *testing.T, s *server, user, stderr string) string {
	t.Helper()
	m := runIDRe.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no run id on stderr:\n%s", stderr)
	}
	resp, err := http.Get(s.url + "/wunder/runs/" + m[1] + "/approvals?user_id=" + user)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// `wunder run --approval-mode suggest` against the real server: the fake
// model's write_file waits for approval, the CLI shows it and asks on the
// terminal, posts the answer, and follows the same stream to the end.
func TestRunCommandAsksForApproval(t *testing.T) {
	s := startServer(t, nil)
	const question = "please write a note"
	for _, tc := range []struct {
		name, input string
		approve     string
		terminal    bool
		code        int
		stdout      []string // each on stdout
		stderr      []string // each on stderr
		notOut      string
		approvals   []string // each in the run's approvals afterwards
	}{
		{name: "yes", input: "y\n", terminal: true, code: exitOK,
			stdout: []string{"notes.txt contains: ", "hello from fakellm"},
			stderr: []string{"? write_file wants approval", `"content": "hello from fakellm"`, "reason: approval mode suggest",
				"approve? [y]es/[n]o (reject)/[e]dit/[c]ancel", "→ approve write_file", "· approved write_file", "✓ write_file", "finished"},
			approvals: []string{`"state":"approved"`}},
		{name: "no with a reason", input: "n\nnot on a Friday\n", terminal: true, code: exitOK,
			stderr:    []string{"reason (optional; the model reads it): ", "→ reject write_file", "(not on a Friday)", "· rejected write_file", "finished"},
			notOut:    "hello from fakellm",
			approvals: []string{`"state":"rejected"`, `"reason":"not on a Friday"`}},
		{name: "edit, bad JSON first", input: "e\n{bad\n[1]\n{\"path\":\"notes.txt\",\"content\":\"edited by a person\"}\n", terminal: true, code: exitOK,
			stdout:    []string{"notes.txt contains: ", "edited by a person"},
			stderr:    []string{"new arguments (one JSON object): ", "not a JSON object (invalid character", "not a JSON object (json: cannot unmarshal array", "· edited write_file"},
			approvals: []string{`"state":"edited"`, `"content":"edited by a person"`}},
		{name: "unknown answer, then cancel", input: "maybe\nc\n", terminal: true, code: exitCancelled,
			stderr:    []string{"answer y, n, e, c", "→ cancel write_file", "cancelled"},
			approvals: []string{`"state":"cancelled"`}},
		{name: "--approve=approve without a terminal", approve: "approve", code: exitOK,
			stdout:    []string{"notes.txt contains: ", "hello from fakellm"},
			approvals: []string{`"state":"approved"`}},
		{name: "--approve=reject", approve: "reject", terminal: true, code: exitOK, notOut: "hello from fakellm",
			approvals: []string{`"state":"rejected"`, rejectReason}},
		{name: "ask without a terminal", input: "y\n", code: exitWaiting,
			stderr:    []string{"pending: appr_", "decide: POST /wunder/runs/run_", `{"decision":"approve"|"edit"|"reject"|"cancel"}`, "stdin is not a terminal", "--approve=approve|reject"},
			approvals: []string{`"state":"pending"`}},
		{name: "stdin ends at the question", input: "", terminal: true, code: exitWaiting,
			stderr:    []string{"approve? ", "stdin ended"},
			approvals: []string{`"state":"pending"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A user per case: a waiting run keeps its user's slot.
			user := "u-" + strings.NewReplacer(" ", "-", ",", "", "=", "-").Replace(tc.name)
			user = strings.Trim(user, "-")
			args := []string{"run", "--server", s.url, "--user", user, "--tools", "write_file,read_file", "--approval-mode", "suggest"}
			if tc.approve != "" {
				args = append(args, "--approve="+tc.approve)
			}
			var in io.Reader = strings.NewReader(tc.input)
			if tc.terminal {
				in = fakeTerminal{in}
			}
			code, out, errs := runCLIStdin(t, t.Context(), in, append(args, question)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errs)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.stderr {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
			if tc.notOut != "" && strings.Contains(out, tc.notOut) {
				t.Errorf("stdout has %q:\n%s", tc.notOut, out)
			}
			if tc.code == exitWaiting {
				m := runIDRe.FindStringSubmatch(errs)
				if m == nil || !strings.Contains(errs, "run "+m[1]+" waits for approval") || !strings.Contains(errs, "/wunder/runs/"+m[1]+"/approvals/") {
					t.Errorf("the message does not name the run and its route:\n%s", errs)
				}
			}
			got := approvalsJSON(t, s, user, errs)
			for _, w := range tc.approvals {
				if !strings.Contains(got, w) {
					t.Errorf("approvals lack %s: %s", w, got)
				}
			}
		})
	}
	if code, _, errs := runCLI(t, t.Context(), "run", "--server", s.url, "--approve=maybe", "hi"); code != exitUsage || !strings.Contains(errs, "--approve") {
		t.Errorf("--approve=maybe: exit %d\n%s", code, errs)
	}
}

// Ctrl-C while the CLI asks: the question gives way, the run is cancelled
// and the CLI reads its final event (exit 3).
func TestRunCommandInterruptedAtTheQuestion(t *testing.T) {
	s := startServer(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdin, w := io.Pipe() // nobody ever answers
	defer w.Close()
	var out, errb bytes.Buffer
	code := executeIn(ctx, []string{"run", "--server", s.url, "--user", "ivan", "--tools", "write_file", "--approval-mode", "suggest",
		"please write a note"}, fakeTerminal{stdin}, &out, &syncWriter{w: &errb, onWrite: func(s string) {
		if strings.Contains(s, "approve? ") {
			cancel()
		}
	}})
	if code != exitCancelled || !strings.Contains(errb.String(), "cancelled") {
		t.Fatalf("exit %d, want %d\n%s", code, exitCancelled, errb.String())
	}
}

// `wunder run` asks the model's question at the terminal: the options are
// numbered, an answer is an option's number or text (a wrong one is
// refused by the server and asked again), and the fake model answers with
// what it read. Without a terminal the question stays pending (exit 5).
func TestRunCommandAnswersAQuestion(t *testing.T) {
	s := startServer(t, nil)
	const question = `call ask_user {"question":"Which environment?","options":["staging","prod"]}`
	for _, tc := range []struct {
		name, input string
		terminal    bool
		code        int
		stdout      string
		stderr      []string
	}{
		{name: "by number", input: "2\n", terminal: true, code: exitOK, stdout: `{"answer":"prod"}`,
			stderr: []string{"? Which environment? (ask_", "  1. staging", "  2. prod", "answer: ", `· answered: "prod"`, "finished"}},
		{name: "a wrong answer, then the text", input: "qa\nstaging\n", terminal: true, code: exitOK, stdout: `{"answer":"staging"}`,
			stderr: []string{"the server refused the answer: invalid argument: answer \"qa\" is not one of the options"}},
		{name: "without a terminal", input: "prod\n", code: exitWaiting,
			stderr: []string{"asks a question (stdin is not a terminal)", "/input"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user := "q-" + strings.ReplaceAll(strings.ReplaceAll(tc.name, " ", "-"), ",", "")
			var in io.Reader = strings.NewReader(tc.input)
			if tc.terminal {
				in = fakeTerminal{in}
			}
			code, out, errs := runCLIStdin(t, t.Context(), in, "run", "--server", s.url, "--user", user, "--tools", "ask_user", question)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errs)
			}
			if !strings.Contains(out, tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, out)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
		})
	}
}
