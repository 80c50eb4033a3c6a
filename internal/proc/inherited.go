package proc

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CloseInheritedOnExec marks every descriptor above stderr close-on-exec,
// so that none wunder inherited from whatever started it (a shell, a
// supervisor, a CI runner) reaches a child: Go opens its own descriptors
// close-on-exec, but leaves inherited ones as they came, and a sandboxed
// command would get them. Call it first thing in main. It returns the
// descriptors it changed; where /proc/self/fd cannot be read (not Linux)
// it changes nothing.
func CloseInheritedOnExec() []int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	var changed []int
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // closed meanwhile (the directory's own), or already
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err == nil {
			changed = append(changed, fd)
		}
	}
	return changed
}
