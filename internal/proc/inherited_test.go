package proc_test

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/wunder/wunder/internal/proc"
)

// A descriptor inherited without close-on-exec (here, a pipe made so) is
// marked, and a child started afterwards no longer has it.
func TestCloseInheritedOnExec(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/fd")
	}
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil { // syscall.Pipe sets no close-on-exec
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(p[0]); syscall.Close(p[1]) })
	fdsOfChild := func() []string {
		out, err := exec.Command("ls", "/proc/self/fd").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(out))
	}
	if !slices.Contains(fdsOfChild(), strconv.Itoa(p[0])) {
		t.Fatalf("the child did not inherit fd %d before: the test shows nothing", p[0])
	}
	changed := proc.CloseInheritedOnExec()
	if !slices.Contains(changed, p[0]) || !slices.Contains(changed, p[1]) {
		t.Fatalf("changed %v, want both ends of the pipe %v", changed, p)
	}
	if flags, err := unix.FcntlInt(uintptr(p[0]), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Fatalf("fd %d flags %d %v", p[0], flags, err)
	}
	if fds := fdsOfChild(); slices.Contains(fds, strconv.Itoa(p[0])) || slices.Contains(fds, strconv.Itoa(p[1])) {
		t.Fatalf("the child still has the pipe: %v", fds)
	}
	if _, err := os.Stat("/proc/self/fd/" + strconv.Itoa(p[0])); err != nil {
		t.Fatalf("the descriptor itself was closed: %v", err)
	}
}
