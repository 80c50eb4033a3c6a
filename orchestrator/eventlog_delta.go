package orchestrator

import (
	"strings"
	"unicode/utf8"
)

// A model's streamed output arrives chunk by chunk; the chunks no reader
// has seen yet share one llm_output_delta event (runLog.emitDelta).

// pendingDelta is an llm_output_delta event that later deltas of its
// round join while nobody can see it yet (emitDelta). Its text grows in
// builders, so that joining is linear in the text however many chunks
// join; the event's Data is written once nothing more can join.
type pendingDelta struct {
	at               int // its index in events
	round            int
	delta, reasoning strings.Builder
	merged           bool // the builders hold more than the event's Data says
	runes            int  // the runes of the text, for the policy's limit
}

// maxMergedDelta bounds the text of one merged llm_output_delta, so that
// a model that outruns the store still gets events of a bounded size.
const maxMergedDelta = 16 << 10

// emitDelta emits d, a part of the model's output. When the log's last
// event is a delta of the same round that the flusher has not taken yet,
// d joins it instead: that event is not visible to anyone yet (events
// become visible once stored), so no reader sees the difference except
// that a stream whose store is slower than its model gets its text in
// fewer, larger events, and the log stores fewer rows. A delta starts a
// new event when another event came between, when it would put
// reasoning after answer text in one event (a reader shows an event's
// reasoning first), or when the merged text would reach maxMergedDelta
// or the policy's payload limit.
func (l *runLog) emitDelta(d LLMDeltaData) {
	if l.policy.KeepOutputChunks {
		l.emit(EventLLMOutputDelta, d)
		return
	}
	runes := utf8.RuneCountInString(d.Delta) + utf8.RuneCountInString(d.ReasoningDelta)
	if l.join(d, runes) {
		return
	}
	ev := l.emit(EventLLMOutputDelta, d)
	if ev.Seq == 0 {
		return // dropped by the policy, or the log closed
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// The event may join later ones while it is still the last and not
	// taken. A delta the policy truncated is over the limit: nothing
	// joins it (withinPayloadLimit).
	if at := int(ev.Seq-l.base) - 1; at == len(l.events)-1 && at >= l.flushed {
		p := &pendingDelta{at: at, round: d.Round, runes: runes}
		p.delta.WriteString(d.Delta)
		p.reasoning.WriteString(d.ReasoningDelta)
		l.delta = p
	}
}

// join adds d, whose text has runes runes, to the pending delta, if it
// may join it (emitDelta).
func (l *runLog) join(d LLMDeltaData, runes int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.delta
	if p == nil || l.closed || p.at != len(l.events)-1 || p.round != d.Round ||
		d.ReasoningDelta != "" && p.delta.Len() > 0 ||
		p.delta.Len()+p.reasoning.Len()+len(d.Delta)+len(d.ReasoningDelta) > maxMergedDelta ||
		!l.withinPayloadLimit(p.runes+runes) {
		return false
	}
	p.delta.WriteString(d.Delta)
	p.reasoning.WriteString(d.ReasoningDelta)
	p.runes += runes
	p.merged = true
	return true
}

// withinPayloadLimit reports whether a delta whose text has runes runes
// is surely not truncated by the policy: JSON writes a rune as at most
// six, and the rest of the payload is short.
func (l *runLog) withinPayloadLimit(runes int) bool {
	n := l.policy.MaxPayloadChars
	return n <= 0 || 6*runes+64 <= n
}

// settleDeltaLocked writes a merged delta's text into its event: nothing
// joins it any more (another event follows it, or the flusher takes it).
func (l *runLog) settleDeltaLocked() {
	if p := l.delta; p != nil {
		if p.merged {
			l.events[p.at].Data = rawJSON(LLMDeltaData{Round: p.round, Delta: p.delta.String(), ReasoningDelta: p.reasoning.String()})
		}
		l.delta = nil
	}
}
