package builtin

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Every run that offers the file tools puts a summary of its user's
// workspace in the system prompt (Set.Summary). Reading the directory for
// each run is four system calls and a stat per file named, and it grows
// with the workspace, which a busy user's runs read again and again while
// it has not changed. So a Set keeps each workspace's last summary with
// what it was made of, and uses it again while
//
//   - the directory's modification time is the one read before it was
//     made: an entry added, removed or renamed changes it (nested changes do
//     not, but the summary names the top level only);
//   - every file whose size it gives still has that size (one lstat each,
//     at most summaryMaxEntries);
//   - that modification time is more than racyWindow old. File times are
//     coarse (a kernel tick, a few milliseconds), so two changes can share
//     one time, and a summary made between them would look current after
//     the second. A listing changed within the window is read again,
//     every time, as make and git do with their racy timestamps.
//
// Something that sets the directory's time back by hand can fool it; the
// prompt's summary is a hint (the model lists the workspace to be sure).
type summaries struct {
	mu sync.Mutex
	m  map[string]*summary // by workspace directory
}

// racyWindow is how recent a listing's change is too recent to trust.
const racyWindow = time.Second

// maxSummaries bounds the kept summaries; past it one is dropped.
const maxSummaries = 4096

type summary struct {
	dirTime time.Time
	sizes   map[string]int64 // the regular files the text gives a size of
	text    string
}

// get returns dir's kept summary when it is still what a read would make.
func (c *summaries) get(dir string) (string, bool) {
	c.mu.Lock()
	s := c.m[dir]
	c.mu.Unlock()
	if s == nil {
		return "", false
	}
	info, err := os.Stat(dir)
	if err != nil || !info.ModTime().Equal(s.dirTime) {
		return "", false
	}
	for name, size := range s.sizes {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != size {
			return "", false
		}
	}
	return s.text, true
}

// put keeps s for dir, unless its listing changed too recently to trust:
// then it drops what it kept for dir.
func (c *summaries) put(dir string, s *summary) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(s.dirTime) <= racyWindow {
		delete(c.m, dir)
		return
	}
	if c.m == nil {
		c.m = make(map[string]*summary)
	}
	if _, ok := c.m[dir]; !ok && len(c.m) >= maxSummaries {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[dir] = s
}

// sizeOf is the size describeEntry gives e, and whether it gives one: a
// regular file's (one lstat; a DirEntry of os.ReadDir does not keep it).
func sizeOf(e fs.DirEntry) (int64, bool) {
	if e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
		return 0, false
	}
	info, err := e.Info()
	if err != nil || !info.Mode().IsRegular() {
		return 0, false
	}
	return info.Size(), true
}
