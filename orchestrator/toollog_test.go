package orchestrator

import (
	"context"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// batchStore records the batches of tool logs it is given and signals
// each on wrote; with release set, the first one waits for it.
type batchStore struct {
	Store
	entered, release chan struct{}
	wrote            chan struct{} // cap 1
	mu               sync.Mutex
	batches          [][]string // the call ids of each batch
}

// heldBatches is a batchStore whose first batch waits for release.
func heldBatches() *batchStore {
	return &batchStore{entered: make(chan struct{}), release: make(chan struct{}), wrote: make(chan struct{}, 1)}
}

// recordBatches is a batchStore that holds nothing.
func recordBatches() *batchStore { return &batchStore{wrote: make(chan struct{}, 1)} }

func (s *batchStore) AppendToolLogs(_ context.Context, logs []*ToolLog) error {
	s.mu.Lock()
	first := len(s.batches) == 0
	ids := make([]string, len(logs))
	for i, l := range logs {
		ids[i] = l.CallID
	}
	s.batches = append(s.batches, ids)
	s.mu.Unlock()
	if first && s.release != nil {
		close(s.entered)
		<-s.release
	}
	select {
	case s.wrote <- struct{}{}:
	default:
	}
	return nil
}

// stored is a copy of the batches so far.
func (s *batchStore) stored() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.batches)
}

// sizes is the length of each batch so far.
func (s *batchStore) sizes() []int {
	var out []int
	for _, b := range s.stored() {
		out = append(out, len(b))
	}
	return out
}

// waitWrite waits for the store's next batch; the bound only keeps a
// writer that never writes from hanging the suite.
func (s *batchStore) waitWrite(t *testing.T) {
	t.Helper()
	select {
	case <-s.wrote:
	case <-time.After(30 * time.Second):
		t.Fatal("no batch of tool logs was written")
	}
}

// Tool logs queued while a batch is written go together in the next one,
// in order; stop writes what is queued, and a log added after stop is
// written at once.
func TestToolLogsGoInBatches(t *testing.T) {
	s := heldBatches()
	w := newToolLogs(s, slog.New(slog.DiscardHandler), -1)
	w.add(&ToolLog{CallID: "1"})
	<-s.entered // the first batch is being written
	for _, id := range []string{"2", "3", "4", "5"} {
		w.add(&ToolLog{CallID: id})
	}
	close(s.release)
	w.stop()
	w.add(&ToolLog{CallID: "6"})
	want := [][]string{{"1"}, {"2", "3", "4", "5"}, {"6"}}
	if got := s.stored(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches = %v; want %v", got, want)
	}
	w.stop() // a second stop returns too
}

// oneByOne is a store without AppendToolLogs.
type oneByOne struct {
	Store
	mu  sync.Mutex
	ids []string
}

func (s *oneByOne) AppendToolLog(_ context.Context, l *ToolLog) error {
	s.mu.Lock()
	s.ids = append(s.ids, l.CallID)
	s.mu.Unlock()
	return nil
}

func TestToolLogsOneByOneWithoutBatches(t *testing.T) {
	s := &oneByOne{}
	w := newToolLogs(s, slog.New(slog.DiscardHandler), -1)
	for _, id := range []string{"1", "2", "3"} {
		w.add(&ToolLog{CallID: id})
	}
	w.stop()
	if !slices.Equal(s.ids, []string{"1", "2", "3"}) {
		t.Fatalf("stored %v; want all three, in order", s.ids)
	}
}

// flush waits for the logs added before it, not for later ones, and
// gives up with its context.
func TestToolLogsFlush(t *testing.T) {
	s := heldBatches()
	w := newToolLogs(s, slog.New(slog.DiscardHandler), -1)
	var released sync.Once
	release := func() { released.Do(func() { close(s.release) }) }
	t.Cleanup(w.stop)
	t.Cleanup(release) // first: stop waits for the held write
	if err := w.flush(t.Context()); err != nil {
		t.Fatalf("flush with nothing queued: %v", err)
	}
	w.add(&ToolLog{CallID: "1"})
	<-s.entered // its write is held
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := w.flush(ctx); err == nil {
		t.Fatal("flush returned before the held write, with its context cancelled")
	}
	flushed := make(chan error, 1)
	go func() { flushed <- w.flush(t.Context()) }()
	select {
	case err := <-flushed:
		t.Fatalf("flush returned (%v) while the log was still being written", err)
	default:
	}
	release()
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
}

// Logs that come while the writer waits for more go in one batch, which a
// flush writes at once, however long the delay.
func TestToolLogsWaitForMoreUntilFlushed(t *testing.T) {
	s := recordBatches()
	w := newToolLogs(s, slog.New(slog.DiscardHandler), time.Hour)
	t.Cleanup(w.stop)
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		w.add(&ToolLog{CallID: id})
		// Give the writer the processor between logs: one that did not
		// wait for more would take each alone. (Correct code passes
		// whatever the scheduler does.)
		for range 50 {
			runtime.Gosched()
		}
	}
	// The bound only keeps a flush that waits for the delay from hanging
	// the suite.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := w.flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	want := [][]string{{"1", "2", "3", "4", "5"}}
	if got := s.stored(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches = %v; want %v", got, want)
	}
	w.add(&ToolLog{CallID: "6"})
	w.stop() // writes what waits, without the delay
	if got := s.sizes(); !slices.Equal(got, []int{5, 1}) {
		t.Fatalf("batch sizes after stop = %v; want [5 1]", got)
	}
}

// A full batch does not wait for the delay, and a log alone is written
// once the delay has passed, without a flush.
func TestToolLogsFullBatchAndLoneLog(t *testing.T) {
	s := recordBatches()
	w := newToolLogs(s, slog.New(slog.DiscardHandler), time.Hour)
	t.Cleanup(w.stop)
	for i := range maxToolLogBatch {
		w.add(&ToolLog{CallID: strconv.Itoa(i)})
	}
	s.waitWrite(t)
	if got := s.sizes(); !slices.Equal(got, []int{maxToolLogBatch}) {
		t.Fatalf("batch sizes = %v; want one full batch", got)
	}

	s = recordBatches()
	w = newToolLogs(s, slog.New(slog.DiscardHandler), time.Millisecond)
	t.Cleanup(w.stop)
	w.add(&ToolLog{CallID: "lone"})
	s.waitWrite(t)
	if got := s.sizes(); !slices.Equal(got, []int{1}) {
		t.Fatalf("batch sizes = %v; want the lone log", got)
	}
}

// A store that does not keep up holds at most maxPending logs in memory:
// the ones past it are dropped, counted, and flush does not wait for them;
// once the store goes on, every log kept is written.
func TestToolLogsBoundedWhileTheStoreStalls(t *testing.T) {
	s := heldBatches()
	w := newToolLogs(s, slog.New(slog.DiscardHandler), -1)
	w.maxPending = 3
	w.add(&ToolLog{CallID: "1"})
	<-s.entered // the first batch is held: the store stalls
	for i := range 10 {
		w.add(&ToolLog{CallID: strconv.Itoa(i + 2)})
	}
	w.mu.Lock()
	pending, dropped := len(w.pending), w.dropped
	w.mu.Unlock()
	if pending != 3 || dropped != 7 {
		t.Fatalf("pending %d, dropped %d; want 3 and 7", pending, dropped)
	}
	close(s.release)
	if err := w.flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"1"}, {"2", "3", "4"}}
	if got := s.stored(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches = %v; want %v", got, want)
	}
	w.stop()
}
