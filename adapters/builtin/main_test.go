package builtin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain puts the directory of the real python3 first on PATH, so that a
// version-manager shim (pyenv's is a bash script taking a second to start)
// does not slow every command test down. It changes nothing when python3
// is already the interpreter itself.
func TestMain(m *testing.M) {
	if out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output(); err == nil {
		if exe := strings.TrimSpace(string(out)); filepath.IsAbs(exe) {
			os.Setenv("PATH", filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
		}
	}
	os.Exit(m.Run())
}
