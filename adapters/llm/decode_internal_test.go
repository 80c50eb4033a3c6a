package llm

import (
	"encoding/json"
	"reflect"
	"testing"

	fastjson "github.com/segmentio/encoding/json"
)

// The model's chunks and responses are decoded with segmentio's
// encoding/json, twice as fast as the standard library's on a chunk
// (BenchmarkChunkDecode). It must decode every input as the standard
// library does: the same error or none, the same value.
func FuzzChunkDecodersAgree(f *testing.F) {
	f.Add([]byte(`{"choices":[{"delta":{"content":"word000 "},"finish_reason":null,"index":0}],"id":"chatcmpl-1","model":"mock","object":"chat.completion.chunk"}`))
	f.Add([]byte(`{"id":"c","object":"chat.completion.chunk","created":1764275000,"choices":[{"index":0,"delta":{"reasoning_content":"hm","reasoning":"hm"},"logprobs":null,"finish_reason":null}],"usage":null}`))
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":"}}]}}]}`))
	f.Add([]byte(`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13,"prompt_tokens_details":{"cached_tokens":2}}}`))
	f.Add([]byte(`{"error":{"message":"overloaded","type":"server_error","code":529}}`))
	f.Add([]byte(`{"choices":[{"message":{"role":"assistant","content":"x\u00e9\ud83d\ude00 \"q\" \\","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"a":1}}}]},"finish_reason":"tool_calls"}]}`))
	f.Add([]byte("{\"choices\":[{\"delta\":{\"content\":\"bad \xff utf8\"}}]}"))
	f.Add([]byte(`{"Choices":[{"Delta":{"CONTENT":"case"}}],"choices":null}`))
	f.Add([]byte(`{"choices":[{"index":1e400}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		agree(t, b, func() any { return new(chatChunk) })
		agree(t, b, func() any { return new(chatResponse) })
	})
}

func agree(t *testing.T, b []byte, newValue func() any) {
	t.Helper()
	std, fast := newValue(), newValue()
	errStd, errFast := json.Unmarshal(b, std), fastjson.Unmarshal(b, fast)
	if (errStd == nil) != (errFast == nil) {
		t.Fatalf("%q: encoding/json says %v, segmentio %v", b, errStd, errFast)
	}
	if errStd == nil && !reflect.DeepEqual(std, fast) {
		t.Fatalf("%q: encoding/json decodes %+v, segmentio %+v", b, std, fast)
	}
}

func BenchmarkChunkDecode(b *testing.B) {
	chunk := []byte(`{"id":"chatcmpl-AbCdEf123","object":"chat.completion.chunk","created":1764275000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0123456789","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}],"usage":null}`)
	for name, unmarshal := range map[string]func([]byte, any) error{"encoding-json": json.Unmarshal, "segmentio": fastjson.Unmarshal} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var ch chatChunk
				if err := unmarshal(chunk, &ch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
