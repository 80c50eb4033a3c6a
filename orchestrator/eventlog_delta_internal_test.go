package orchestrator

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

// heldWrites hands each batch of events to the test as the log writes it
// and holds the write until release is closed.
type heldWrites struct {
	Store
	batches chan []Event
	release chan struct{}
}

func (s *heldWrites) AppendEvents(ctx context.Context, evs []Event) error {
	s.batches <- slices.Clone(evs)
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deltaOf is an llm_output_delta event's payload.
func deltaOf(t *testing.T, ev Event) LLMDeltaData {
	t.Helper()
	if ev.Type != EventLLMOutputDelta {
		t.Fatalf("event %d is %s, want %s", ev.Seq, ev.Type, EventLLMOutputDelta)
	}
	var d LLMDeltaData
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		t.Fatalf("event %d: %v", ev.Seq, err)
	}
	return d
}

// Deltas emitted while a write is under way join the last delta not
// handed to the store yet, as long as nothing came between, the round is
// the same, reasoning does not follow answer text in one event, and the
// merged payload stays within the limits; seqs stay dense and what
// becomes visible is what was stored.
func TestDeltasJoinWhileNobodySeesThem(t *testing.T) {
	held := func(t *testing.T, p EventPolicy) (*runLog, *heldWrites) {
		store := &heldWrites{batches: make(chan []Event, 16), release: make(chan struct{})}
		l := newRunLog("r", "s", 0, store, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now, p, time.Second, nil)
		l.emit(EventProgress, ProgressData{Stage: "started"})
		if first := <-store.batches; len(first) != 1 || first[0].Type != EventProgress {
			t.Fatalf("first batch = %+v", first)
		}
		// The first batch's write is held: whatever comes now waits.
		return l, store
	}
	second := func(t *testing.T, l *runLog, store *heldWrites) []Event {
		t.Helper()
		close(store.release)
		l.close()
		batch := <-store.batches
		visible, _, ended := l.read(0)
		if !ended || len(visible) != len(batch)+1 {
			t.Fatalf("visible %d events (ended %v) after a batch of %d and the first", len(visible), ended, len(batch))
		}
		for i, ev := range visible[1:] {
			if ev.Seq != int64(i+2) || !slices.Equal(ev.Data, batch[i].Data) {
				t.Fatalf("visible event %+v, stored %+v", ev, batch[i])
			}
		}
		return batch
	}
	want := func(t *testing.T, batch []Event, deltas ...LLMDeltaData) {
		t.Helper()
		var got []LLMDeltaData
		for _, ev := range batch {
			if ev.Type == EventLLMOutputDelta {
				got = append(got, deltaOf(t, ev))
			}
		}
		if !slices.Equal(got, deltas) {
			t.Fatalf("deltas stored = %.300v; want %.300v", got, deltas)
		}
	}

	t.Run("rules", func(t *testing.T) {
		l, store := held(t, EventPolicy{})
		l.emitDelta(LLMDeltaData{Round: 1, Delta: "a"})
		l.emitDelta(LLMDeltaData{Round: 1, Delta: "b"})
		l.emitDelta(LLMDeltaData{Round: 1, ReasoningDelta: "r"}) // after answer text: its own event
		l.emitDelta(LLMDeltaData{Round: 1, Delta: "c"})          // answer text after reasoning joins it
		l.emitDelta(LLMDeltaData{Round: 2, Delta: "x"})          // another round
		l.emit(EventLLMOutput, LLMOutputData{Round: 2})
		l.emitDelta(LLMDeltaData{Round: 2, Delta: "y"}) // an event came between
		l.emitDelta(LLMDeltaData{Round: 2, Delta: "z"})
		batch := second(t, l, store)
		if got := types(batch); !slices.Equal(got, []string{EventLLMOutputDelta, EventLLMOutputDelta, EventLLMOutputDelta, EventLLMOutput, EventLLMOutputDelta}) {
			t.Fatalf("batch = %v", got)
		}
		want(t, batch,
			LLMDeltaData{Round: 1, Delta: "ab"},
			LLMDeltaData{Round: 1, Delta: "c", ReasoningDelta: "r"},
			LLMDeltaData{Round: 2, Delta: "x"},
			LLMDeltaData{Round: 2, Delta: "yz"})
	})

	t.Run("a taken delta is not changed", func(t *testing.T) {
		store := &heldWrites{batches: make(chan []Event, 16), release: make(chan struct{})}
		l := newRunLog("r", "s", 0, store, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now, EventPolicy{}, time.Second, nil)
		l.emitDelta(LLMDeltaData{Round: 1, Delta: "a"})
		if first := <-store.batches; len(first) != 1 || deltaOf(t, first[0]).Delta != "a" {
			t.Fatalf("first batch = %+v", first)
		}
		l.emitDelta(LLMDeltaData{Round: 1, Delta: "b"})
		want(t, second(t, l, store), LLMDeltaData{Round: 1, Delta: "b"})
		if evs, _, _ := l.read(0); deltaOf(t, evs[0]).Delta != "a" {
			t.Fatalf("the first batch's delta became %s", evs[0].Data)
		}
	})

	t.Run("size", func(t *testing.T) {
		l, store := held(t, EventPolicy{})
		big := strings.Repeat("a", maxMergedDelta-1)
		l.emitDelta(LLMDeltaData{Round: 1, Delta: big})
		l.emitDelta(LLMDeltaData{Round: 1, Delta: "b"})
		l.emitDelta(LLMDeltaData{Round: 1, Delta: "cd"})
		want(t, second(t, l, store), LLMDeltaData{Round: 1, Delta: big + "b"}, LLMDeltaData{Round: 1, Delta: "cd"})
	})

	t.Run("payload limit", func(t *testing.T) {
		// 6×20+64 runes fit in 200, 6×30+64 do not: a merged delta is
		// never one the limit would truncate.
		l, store := held(t, EventPolicy{MaxPayloadChars: 200})
		ten := strings.Repeat("é", 10)
		for range 3 {
			l.emitDelta(LLMDeltaData{Round: 1, Delta: ten})
		}
		long := strings.Repeat("x", 300) // truncated alone: nothing joins it
		l.emitDelta(LLMDeltaData{Round: 1, Delta: long})
		l.emitDelta(LLMDeltaData{Round: 1, Delta: "y"})
		batch := second(t, l, store)
		want(t, batch[:2], LLMDeltaData{Round: 1, Delta: ten + ten}, LLMDeltaData{Round: 1, Delta: ten})
		if len(batch) != 4 || !strings.Contains(string(batch[2].Data), `"truncated":true`) {
			t.Fatalf("batch = %v; want the long delta truncated alone, then y", types(batch))
		}
		want(t, batch[3:], LLMDeltaData{Round: 1, Delta: "y"})
	})

	t.Run("kept as sent", func(t *testing.T) {
		l, store := held(t, EventPolicy{KeepOutputChunks: true})
		l.emitDelta(LLMDeltaData{Round: 1, Delta: "a"})
		l.emitDelta(LLMDeltaData{Round: 1, Delta: "b"})
		want(t, second(t, l, store), LLMDeltaData{Round: 1, Delta: "a"}, LLMDeltaData{Round: 1, Delta: "b"})
	})

	t.Run("dropped", func(t *testing.T) {
		l, store := held(t, EventPolicy{Drop: []string{EventLLMOutputDelta}})
		l.emitDelta(LLMDeltaData{Round: 1, Delta: "a"})
		l.emit(EventLLMOutput, LLMOutputData{Round: 1})
		if batch := second(t, l, store); len(batch) != 1 || batch[0].Type != EventLLMOutput {
			t.Fatalf("batch = %v; want the delta dropped", types(batch))
		}
	})
}

func types(evs []Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

// BenchmarkDeltasJoin is the cost of a model chunk that joins the delta
// before it while the store writes (a 16 KiB event takes 4,096 of them):
// it stays flat however long the merged text grows.
func BenchmarkDeltasJoin(b *testing.B) {
	store := &heldWrites{batches: make(chan []Event, 1<<20), release: make(chan struct{})}
	l := newRunLog("r", "s", 0, store, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now, EventPolicy{}, time.Second, nil)
	l.emit(EventProgress, ProgressData{Stage: "started"})
	<-store.batches // the first write is held from here on
	b.ReportAllocs()
	for b.Loop() {
		l.emitDelta(LLMDeltaData{Round: 1, Delta: "abcd"})
	}
	b.StopTimer()
	close(store.release)
	l.close()
}
