package orchestrator

import (
	"crypto/rand"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// An instance is one orchestrator in one process. Its id names the host,
// the process and when that process started, plus a random part:
//
//	<host>:<pid>:<start>:<random>
//
// Runs are owned by the instance executing them (Run.Owner), and every
// instance holds a lease in the store (the lock "instance:<id>") that it
// renews while it lives. Whether another instance is dead is decided in
// two ways, the fast one first:
//
//   - same host: its process is gone, or the pid now belongs to another
//     process (its start time differs). A server restarted after kill -9
//     recognises its predecessor's runs at once, without waiting for
//     leases to expire;
//   - any host: its lease has expired (it stopped renewing it), so a
//     replica takes over the runs of a replica that died within LockTTL.
//
// <start> is the process's start time in clock ticks since boot
// (/proc/<pid>/stat field 22); where /proc is not readable it is 0 and only
// the lease decides.

// newInstanceID returns the id of an instance of this process.
func newInstanceID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	host = strings.ReplaceAll(host, ":", "_")
	pid := os.Getpid()
	return fmt.Sprintf("%s:%d:%d:%s", host, pid, processStart(pid), strings.ToLower(rand.Text()[:10]))
}

// instanceProcess parses an instance id into its host, pid and start.
func instanceProcess(id string) (host string, pid int, start uint64, ok bool) {
	parts := strings.Split(id, ":")
	if len(parts) != 4 {
		return "", 0, 0, false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return "", 0, 0, false
	}
	start, err = strconv.ParseUint(parts[2], 10, 64)
	if err != nil {
		return "", 0, 0, false
	}
	return parts[0], pid, start, true
}

// processGone reports whether the instance id names a process of this host
// that no longer runs. false means alive or unknown (another host, no
// /proc): the lease decides then.
func processGone(self, other string) bool {
	myHost, _, _, ok1 := instanceProcess(self)
	host, pid, start, ok2 := instanceProcess(other)
	if !ok1 || !ok2 || host != myHost || start == 0 {
		return false
	}
	switch now := processStart(pid); {
	case now != 0:
		return now != start // another process has the pid now
	default:
		return procMounted() // no such process, if /proc can be trusted
	}
}

// processStart returns the start time of pid in clock ticks since boot,
// or 0 when it cannot be read.
func processStart(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field 22 (starttime) is f[19].
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0
	}
	v, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// procMounted reports whether /proc answers for this process, so that a
// missing /proc/<pid> means the process is gone rather than that /proc is
// not mounted.
func procMounted() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}
