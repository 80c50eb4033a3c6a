package orchestrator_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// AppendJSON writes what json.Marshal writes, for any valid Data and any
// strings: the payloads the event log makes (already in Marshal's form)
// and ones a store gives back reformatted or with characters Marshal
// escapes.
func FuzzEventAppendJSON(f *testing.F) {
	for _, seed := range []struct {
		id, typ, data string
		ns            int64
	}{
		{"run_1", "final", `{"answer":"a b","state":"finished"}`, 1795000000123456789},
		{"run_<2>", "tool\"result", `{"a": [1, 2, {"b": "x\"y"}], "c": null}`, 0},
		{"run_3", "llm_output_delta", "{\"delta\":\"\\u003cb\\u003e & <i> \u2028\"}", -62135596800000000},
		{"r\u00e9", "x\ty", ` "s" `, 1},
		{"", "", `[]`, 253402300799999999},
	} {
		f.Add(seed.id, seed.typ, []byte(seed.data), int64(7), seed.ns, int32(0))
	}
	// Zones: an ordinary one, one with seconds, and one RFC 3339 cannot
	// write (24 hours or more: Marshal's error).
	for _, zone := range []int32{8 * 3600, -(5*3600 + 30*60 + 17), 25 * 3600, -24 * 3600} {
		f.Add("run_z", "final", []byte(`{}`), int64(1), int64(1795000000123456789), zone)
	}
	f.Fuzz(func(t *testing.T, id, typ string, data []byte, seq, ns int64, zone int32) {
		if len(data) > 0 && !json.Valid(data) {
			return // Data is valid JSON by contract
		}
		at := time.Unix(0, ns).UTC()
		if zone != 0 {
			at = at.In(time.FixedZone("z", int(zone%(48*3600))))
		}
		ev := orchestrator.Event{RunID: id, SessionID: "s" + id, Seq: seq, Type: typ, Data: data, Time: at}
		if len(data) == 0 && seq%2 == 0 {
			ev.Data = nil // no data at all: null
		}
		want, wantErr := json.Marshal(&ev)
		got, err := ev.AppendJSON([]byte("prefix"))
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("AppendJSON error %v; Marshal's %v", err, wantErr)
		}
		if wantErr != nil {
			return
		}
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("AppendJSON =\n%s\nMarshal =\nprefix%s", got, want)
		}
	})
}

// BenchmarkEventJSON: an llm_output event as streams write it, by
// AppendJSON and by json.Marshal.
func BenchmarkEventJSON(b *testing.B) {
	data, _ := json.Marshal(map[string]any{"content": "The answer, in a sentence or two of plain text.", "reasoning": "", "round": 1})
	ev := orchestrator.Event{RunID: "run_01m8f2g3pkwmxjr3h593qhgk8a", SessionID: "sess_01m8f2g3pkwmxjr3h593qhgk8a", Seq: 5,
		Type: orchestrator.EventLLMOutput, Data: data, Time: time.Now().UTC()}
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = ev.AppendJSON(buf[:0])
		}
	})
	b.Run("Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(&ev)
		}
	})
}
