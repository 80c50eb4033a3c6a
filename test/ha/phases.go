package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// check runs the phases against one topology and collects the broken
// invariants.
type check struct {
	t      *topology
	o      options
	broken []string
}

func (c *check) breach(format string, args ...any) {
	c.broken = append(c.broken, fmt.Sprintf(format, args...))
}

// killPhase: users load the cluster; once a third of the runs are
// submitted, one replica is killed with SIGKILL. It stays down until every
// run that was under way at the kill has ended — so the survivors took
// over the dead replica's runs, not the replica restarted — and is then
// started again. Failed requests may not exceed those in flight at the
// kill.
func (c *check) killPhase(ctx context.Context) error {
	l := newLoad(c.t.lbURL)
	victim := c.t.replicas[1]
	errc := make(chan error, 1)
	go func() { errc <- l.drive(ctx, c.o.users, func(n int64) bool { return n < int64(c.o.runs) }) }()
	if err := poll(ctx, 5*time.Minute, "a third of the runs to be submitted", func() bool { return l.submitted.Load() >= int64(c.o.runs/3) }); err != nil {
		return err
	}
	type started struct{ user, id string }
	var open []started
	l.mu.Lock()
	for _, r := range l.runs {
		open = append(open, started{r.user, r.id})
	}
	l.mu.Unlock()
	inflight := l.inflight.Load()
	killed := time.Now()
	victim.kill9()
	fmt.Printf("   killed %s (SIGKILL) with %d requests in flight through the balancer (any replica)\n", victim.name, inflight)
	for _, s := range open {
		if err := pollEvery(ctx, 2*time.Minute, 50*time.Millisecond, "run "+s.id+" to end without the killed replica", func() bool {
			m, err := l.getRun(ctx, l.lb, s.user, s.id)
			return err == nil && terminal(m["state"])
		}); err != nil {
			c.breach("kill -9: %v", err)
		}
	}
	fmt.Printf("   every run started before the kill ended %v after it, the killed replica still down\n", time.Since(killed).Round(time.Millisecond))
	if err := victim.start(c.o.bin); err != nil {
		return err
	}
	if err := victim.waitReady(ctx, time.Minute); err != nil {
		return err
	}
	if err := c.t.waitBalanced(ctx, victim, true, time.Minute); err != nil {
		return err
	}
	fmt.Printf("   %s restarted and back in rotation %v after the kill\n", victim.name, time.Since(killed).Round(time.Millisecond))
	if err := <-errc; err != nil {
		return err
	}
	_, failed := c.report(ctx, l)
	if int64(failed) > inflight {
		c.breach("kill -9: %d failed requests, more than the %d in flight at the kill", failed, inflight)
	}
	return nil
}

// rollingPhase: under load, each replica in turn gets SIGTERM, is waited
// for, started again and waited for until HAProxy has it up. No request
// may fail.
func (c *check) rollingPhase(ctx context.Context) error {
	l := newLoad(c.t.lbURL)
	restarted := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- l.drive(ctx, c.o.users, func(n int64) bool {
			select {
			case <-restarted:
				return n < int64(c.o.runs)
			default:
				return true // keep the load on until every replica restarted
			}
		})
	}()
	step := int64(max(c.o.runs/6, 1))
	var stops []string
	for _, r := range c.t.replicas {
		at := l.submitted.Load() + step
		if err := poll(ctx, 5*time.Minute, "load before stopping "+r.name, func() bool { return l.submitted.Load() >= at }); err != nil {
			close(restarted)
			return err
		}
		took, err := r.term(time.Duration(c.o.drainDelay)*time.Second + 30*time.Second)
		if err != nil {
			c.breach("rolling restart: %v", err)
		}
		stops = append(stops, fmt.Sprintf("%s %v", r.name, took.Round(time.Millisecond)))
		if limit := time.Duration(c.o.drainDelay)*time.Second + 5*time.Second; took > limit {
			c.breach("rolling restart: %s took %v to stop, more than drain_delay_s + 5 s", r.name, took)
		}
		if err := r.start(c.o.bin); err != nil {
			close(restarted)
			return err
		}
		err = r.waitReady(ctx, time.Minute)
		if err == nil {
			err = c.t.waitBalanced(ctx, r, true, time.Minute)
		}
		if err != nil {
			close(restarted)
			return err
		}
	}
	close(restarted)
	fmt.Printf("   stop durations (SIGTERM to exit, drain_delay_s %d): %s\n", c.o.drainDelay, strings.Join(stops, ", "))
	if err := <-errc; err != nil {
		return err
	}
	if _, failed := c.report(ctx, l); failed > 0 {
		c.breach("rolling restart: %d failed requests; want 0", failed)
	}
	return nil
}

// report verifies the runs of a load phase and prints its figures:
// runs submitted, terminal and stuck; events lost and duplicated over
// the followers; failed requests by kind; tool executions.
func (c *check) report(ctx context.Context, l *load) (map[string]int, int) {
	byState := map[string]int{}
	stuck, followers, lost, dup, resumed := 0, 0, 0, 0, 0
	once, cut, twice := 0, 0, 0
	for _, r := range l.runs {
		if r.state == "" || !terminal(r.state) {
			if err := l.waitTerminal(ctx, r, 90*time.Second); err != nil {
				stuck++
				c.breach("run %s of %s is stuck: %v", r.id, r.user, err)
				continue
			}
		}
		byState[r.state]++
		if r.state == "failed" {
			c.breach("run %s ended failed", r.id)
		}
		if !r.follower {
			// Read its log too: was it taken over?
			full := &runRec{user: r.user, id: r.id}
			if err := l.follow(ctx, full, false, time.Minute); err != nil {
				c.breach("run %s: its log cannot be read: %v", r.id, err)
			}
			r.resumed, r.resultBeforeRes = full.resumed, full.resultBeforeRes
		}
		if r.resumed {
			resumed++
		}
		if r.follower {
			followers++
			uniq := map[int64]bool{}
			for _, s := range r.seen {
				uniq[s] = true
			}
			dup += len(r.seen) - len(uniq)
			for s := int64(1); s <= r.lastSeq; s++ {
				if !uniq[s] {
					lost++
				}
			}
		}
		switch hits := c.t.counter.count(r.token); {
		case hits == 1:
			once++
		case hits == 0:
			if r.state == "finished" {
				c.breach("run %s finished without executing its tool", r.id)
			}
		default:
			// Executed more than once: allowed only for the round a dead
			// replica cut before its result was stored.
			if r.resumed && !r.resultBeforeRes {
				cut++
			} else {
				twice++
				c.breach("run %s executed its tool %d times for a recorded round (resumed %v)", r.id, hits, r.resumed)
			}
		}
	}
	failed, total, attempts := l.failures()
	terminalN := 0
	for _, n := range byState {
		terminalN += n
	}
	fmt.Printf("   runs: submitted %d, terminal %d %v, stuck %d; taken over by another replica (resumed) %d\n", len(l.runs), terminalN, byState, stuck, resumed)
	fmt.Printf("   events over %d followers: lost %d, duplicated %d; streams ended resumably (retry:) and resumed %d\n", followers, lost, dup, l.resumable.Load())
	if lost > 0 || dup > 0 {
		c.breach("%d events lost, %d duplicated", lost, dup)
	}
	fmt.Printf("   tool executions: once %d, again in a round cut by the kill %d, twice for a recorded round %d\n", once, cut, twice)
	fmt.Printf("   failed requests (each retried until it succeeded): %d %s; failed attempts %d\n", total, kinds(failed), attempts)
	return failed, total
}

func kinds(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// approvalPhase: a run that needs an approval is submitted to one
// replica directly and waits there; that replica is killed; the decision
// goes through the balancer, and the run finishes, its tool executed
// once.
func (c *check) approvalPhase(ctx context.Context) error {
	l := newLoad(c.t.lbURL)
	victim := c.t.replicas[0]
	r := &runRec{user: "ha_approver", token: newToken()}
	id, err := l.submit(ctx, victim.url, r.user, fmt.Sprintf(`call counter__hit {"token":%q}`, r.token), "suggest")
	if err != nil {
		return err
	}
	r.id = id
	if err := poll(ctx, time.Minute, "the run to wait for its approval", func() bool {
		m, err := l.getRun(ctx, victim.url, r.user, r.id)
		return err == nil && m["state"] == "waiting_approval"
	}); err != nil {
		return err
	}
	victim.kill9()
	fmt.Printf("   run %s waits for an approval; %s killed (SIGKILL)\n", r.id, victim.name)
	var list struct {
		Approvals []struct {
			ID string `json:"approval_id"`
		} `json:"approvals"`
	}
	if err := l.getJSON(ctx, "/wunder/runs/"+r.id+"/approvals?user_id="+url.QueryEscape(r.user), &list); err != nil {
		return err
	}
	approvals := list.Approvals
	if len(approvals) != 1 {
		return fmt.Errorf("the run lists %d approvals; want 1", len(approvals))
	}
	decided := time.Now()
	if err := l.postJSON(ctx, "/wunder/runs/"+r.id+"/approvals/"+approvals[0].ID+"?user_id="+url.QueryEscape(r.user),
		map[string]string{"decision": "approve"}); err != nil {
		return err
	}
	if err := l.waitTerminal(ctx, r, time.Minute); err != nil {
		return err
	}
	hits := c.t.counter.count(r.token)
	fmt.Printf("   decided through the balancer: run %s in %v, tool executed %d time(s)\n", r.state, time.Since(decided).Round(time.Millisecond), hits)
	if r.state != "finished" || hits != 1 {
		c.breach("approval: the run ended %s with its tool executed %d times; want finished, once", r.state, hits)
	}
	if err := victim.start(c.o.bin); err != nil {
		return err
	}
	if err := victim.waitReady(ctx, time.Minute); err != nil {
		return err
	}
	return c.t.waitBalanced(ctx, victim, true, time.Minute)
}

// cancelPhase: runs whose model call hangs are cancelled through the
// balancer (round-robin: mostly on a replica that does not execute them);
// the latency is from the cancel request to the run read terminal.
func (c *check) cancelPhase(ctx context.Context) error {
	l := newLoad(c.t.lbURL)
	var lat []time.Duration
	for i := range c.o.cancels {
		r := &runRec{user: fmt.Sprintf("ha_cancel_%d", i)}
		id, err := l.submit(ctx, l.lb, r.user, "think forever #hang", "")
		if err != nil {
			return err
		}
		r.id = id
		if err := poll(ctx, time.Minute, "the run to run", func() bool {
			m, err := l.getRun(ctx, l.lb, r.user, r.id)
			return err == nil && m["state"] == "running"
		}); err != nil {
			return err
		}
		began := time.Now()
		if err := l.postJSON(ctx, "/wunder/runs/"+r.id+"/cancel?user_id="+url.QueryEscape(r.user), nil); err != nil {
			return err
		}
		if err := pollEvery(ctx, 30*time.Second, 5*time.Millisecond, "the cancel to take", func() bool {
			m, err := l.getRun(ctx, l.lb, r.user, r.id)
			return err == nil && terminal(m["state"])
		}); err != nil {
			c.breach("cancel of %s: %v", r.id, err)
			continue
		}
		lat = append(lat, time.Since(began))
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		fmt.Printf("   cancel latency over %d runs: median %v, max %v\n", len(lat), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
		if lat[len(lat)-1] > c.o.cancelLimit {
			c.breach("cancel took %v; want within %v", lat[len(lat)-1], c.o.cancelLimit)
		}
	}
	return nil
}

// mcpPhase: one MCP session through the balancer, so its requests land on
// every replica in turn: initialize, tools/list, then tools/call of
// wunder__run.
func (c *check) mcpPhase(ctx context.Context) error {
	cl := mcp.NewClient(&mcp.Implementation{Name: "ha", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.t.lbURL + "/wunder/mcp", MaxRetries: -1}, nil)
	if err != nil {
		c.breach("MCP: initialize through the balancer: %v", err)
		fmt.Println("   MCP calls through the balancer: 0/1 (initialize failed)")
		return nil
	}
	defer cs.Close()
	ok, total := 0, 0
	if _, err := cs.ListTools(ctx, nil); err == nil {
		ok++
	}
	total++
	for i := range c.o.mcpCalls {
		total++
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": fmt.Sprintf("hello %d", i)}})
		if err == nil && !res.IsError {
			ok++
		} else if err != nil {
			fmt.Printf("   tools/call %d: %v\n", i, err)
		}
	}
	fmt.Printf("   MCP calls through the balancer (initialize ok, then tools/list and tools/call): %d/%d ok\n", ok, total)
	if ok != total {
		c.breach("MCP: %d of %d calls failed", total-ok, total)
	}
	return nil
}

func (l *load) getJSON(ctx context.Context, path string, out any) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, l.lb+path, nil)
	return l.roundTrip(req, out)
}

func (l *load) postJSON(ctx context.Context, path string, body any) error {
	b, _ := json.Marshal(body)
	if body == nil {
		b = []byte("{}")
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, l.lb+path, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	return l.roundTrip(req, nil)
}

func (l *load) roundTrip(req *http.Request, out any) error {
	resp, err := l.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return errors.New(req.Method + " " + req.URL.Path + ": " + resp.Status + " " + string(b))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
