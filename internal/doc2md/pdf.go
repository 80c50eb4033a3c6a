package doc2md

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Runner runs a converter program. args[0] is the program, a name on PATH
// or an absolute path; the other arguments name files relative to dir,
// which is the working directory of the program (in a sandbox: the
// directory bound as its workspace). The program's standard output goes
// to stdout, its errors to stderr. Run returns when the program has ended
// or ctx is done (the program then stopped).
type Runner interface {
	Run(ctx context.Context, dir string, args []string, stdout, stderr io.Writer) error
}

// RunnerFunc adapts a function to [Runner].
type RunnerFunc func(ctx context.Context, dir string, args []string, stdout, stderr io.Writer) error

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, dir string, args []string, stdout, stderr io.Writer) error {
	return f(ctx, dir, args, stdout, stderr)
}

// execRunner runs the program as a child of this process.
type execRunner struct{}

func (execRunner) Run(ctx context.Context, dir string, args []string, stdout, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	return cmd.Run()
}

// capWriter keeps the first n bytes written and counts the rest.
type capWriter struct {
	buf     bytes.Buffer
	n       int64
	dropped int64
}

func (w *capWriter) Write(p []byte) (int, error) {
	room := max(w.n-int64(w.buf.Len()), 0)
	w.buf.Write(p[:min(int64(len(p)), room)])
	w.dropped += int64(len(p)) - min(int64(len(p)), room)
	return len(p), nil
}

// ErrNoPDFToText is the reason a server without pdftotext gives for a
// PDF it cannot read.
var ErrNoPDFToText = errors.New("this server cannot read PDF: pdftotext (Debian package poppler-utils) is not installed")

// pdf runs pdftotext -layout on the first MaxPDFPages pages, within the
// conversion's time; pages are separated by a horizontal rule. Its
// output is kept as far as the Markdown keeps it and counted beyond.
func (j *job) pdf(data []byte) error {
	bin, err := exec.LookPath(j.o.PDFToText)
	if err != nil {
		return errorf(j.name, Unsupported, "%v", ErrNoPDFToText)
	}
	dir, err := os.MkdirTemp("", "wunder-doc2md-")
	if err != nil {
		return fmt.Errorf("doc2md: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return fmt.Errorf("doc2md: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.pdf"), data, 0o644); err != nil {
		return fmt.Errorf("doc2md: %w", err)
	}
	out := &capWriter{n: j.out.keep + 4096}
	errOut := &capWriter{n: 2048}
	// The absolute path: a sandbox shows the system directories at their
	// own paths, but its PATH may not be the server's.
	args := []string{bin, "-layout", "-enc", "UTF-8", "-l", strconv.Itoa(j.o.MaxPDFPages), "in.pdf", "-"}
	err = j.o.Runner.Run(j.ctx, dir, args, out, errOut)
	if err := j.alive(); err != nil {
		return err
	}
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(errOut.buf.String()), "\n")
		if msg == "" {
			msg = err.Error()
		}
		return errorf(j.name, Unreadable, "pdftotext cannot read it: %s", msg)
	}
	pages := strings.Split(strings.TrimRight(out.buf.String(), "\f\n"), "\f")
	for i, p := range pages {
		pages[i] = strings.Trim(p, "\n")
	}
	if strings.TrimSpace(strings.Join(pages, "")) == "" { // not even the rules between blank pages
		return errorf(j.name, Unreadable, "the PDF has no text (a scanned document? wunder does no OCR)")
	}
	text := strings.Join(pages, "\n\n---\n\n")
	if err := j.out.write(text); err != nil {
		return err
	}
	if err := j.out.skip(out.dropped); err != nil {
		return err
	}
	if len(pages) >= j.o.MaxPDFPages {
		return j.out.write(fmt.Sprintf("\n\n[only the first %d pages are converted (attachments.max_pdf_pages)]", j.o.MaxPDFPages))
	}
	return nil
}
