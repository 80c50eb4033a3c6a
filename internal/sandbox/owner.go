package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// PrepareRoot creates dir, the directory holding the workspaces, when
// missing. Staged calls (stage.go) reach their workspace whatever the
// modes above it; only when a root cannot stage, and bwrap must reach the
// workspace by its path as the sandbox user, does PrepareRoot let that
// user search dir (o+x; never o+r, so the user ids in it cannot be
// listed), and the directories above it must be searchable already:
// [Sandbox.Start] says which one is not.
func (s *Sandbox) PrepareRoot(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if !s.asRoot || s.setpriv != "" {
		return nil
	}
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if m := info.Mode().Perm(); m&0o001 == 0 {
		if err := os.Chmod(dir, m|0o001); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	return nil
}

// prepare makes c's workspace usable by the sandbox identity, which
// wunder (root) is not: the tree owned by it. When the call is staged
// (stage.go) it opens the call's directories and re-owns the workspace
// through the descriptor the first bwrap will bind, so what is re-owned is
// what is mounted; otherwise it checks that every directory above the
// workspace is searchable by the sandbox user, and returns nil.
func (s *Sandbox) prepare(c Command) (*staged, error) {
	if s.setpriv != "" {
		st, err := openStaged(c)
		if err != nil {
			return nil, err
		}
		if err := own(procPath(st.files[0]), s.opts.UID, s.opts.GID); err != nil {
			st.close()
			return nil, err
		}
		return st, nil
	}
	real, err := filepath.EvalSymlinks(c.Workspace)
	if err != nil {
		return nil, fmt.Errorf("sandbox: workspace: %w", err)
	}
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		if err := s.searchable(dir); err != nil {
			return nil, err
		}
		if dir == "/" {
			break
		}
	}
	return nil, own(real, s.opts.UID, s.opts.GID)
}

// searchable checks that the sandbox identity may pass through dir.
func (s *Sandbox) searchable(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	m := info.Mode().Perm()
	switch {
	case int(st.Uid) == s.opts.UID && m&0o100 != 0,
		int(st.Gid) == s.opts.GID && m&0o010 != 0,
		m&0o001 != 0:
		return nil
	}
	return fmt.Errorf("sandbox: %s (mode %04o) is not searchable by the sandbox user %d:%d, so its workspaces "+
		"cannot be mounted: install setpriv (util-linux) and run wunder with CAP_SYS_ADMIN, which lets it "+
		"mount them as root, give the directory o+x (chmod o+x), or move the workspace root", dir, m, s.opts.UID, s.opts.GID)
}

// own lchowns the tree at dir to uid:gid through an [os.Root], so a symlink
// in the tree is changed itself and never followed, and no path leads out.
// Entries already owned are left alone; so are regular files with more
// than one link, which might be shared with a file outside.
func own(dir string, uid, gid int) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("sandbox: workspace: %w", err)
	}
	defer root.Close()
	var first error
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && first == nil {
				first = err
			}
			return nil
		}
		info, err := root.Lstat(p)
		if err != nil {
			return nil // removed meanwhile
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok || (int(st.Uid) == uid && int(st.Gid) == gid) {
			return nil
		}
		if info.Mode().IsRegular() && st.Nlink > 1 {
			return nil
		}
		if err := root.Lchown(p, uid, gid); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
		return nil
	})
	if err == nil {
		err = first
	}
	if err != nil {
		return fmt.Errorf("sandbox: give the workspace to the sandbox user: %w", err)
	}
	return nil
}
