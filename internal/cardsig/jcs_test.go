package cardsig_test

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"testing"

	"github.com/wunder/wunder/internal/cardsig"
)

// The examples of RFC 8785: section 3.2.2 (primitives), 3.2.3 (property
// order by UTF-16 code units: the emoji's surrogate pair sorts before
// U+FB33) and the number table of Appendix B (ES6 Number serialization),
// through Canonical (which canonicalizes an object less its signatures).
func TestPayloadRFC8785Vectors(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"3.2.2 primitives",
			`{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
			  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
			  "literals": [null, true, false]}`,
			`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`},
		{"3.2.3 sorting",
			`{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
			  "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control",
			  "\u00f6": "Latin Small Letter O With Diaeresis"}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\"," +
				"\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"},
		{"signatures left out",
			`{"b": 1, "signatures": [{"protected": "x", "signature": "y"}], "a": {"z": [], "y": {}}}`,
			`{"a":{"y":{},"z":[]},"b":1}`},
	}
	for _, c := range cases {
		got, err := cardsig.Canonical([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("%s: Canonical = %s, %v\nwant %s", c.name, got, err, c.want)
		}
	}
}

// The signed payload leaves out default values as the reference SDKs do
// (A2A 1.0 section 8.4.1): null, "", [] and {}, recursively, a container
// left empty going too; false and 0 stay (explicitly set optionals).
func TestPayloadRemovesDefaults(t *testing.T) {
	t.Parallel()
	in := `{"name":"Example Agent","description":"","iconUrl":null,
	  "capabilities":{"streaming":false,"pushNotifications":false,"extensions":[]},
	  "securityRequirements":[{"schemes":{"apiKey":[]}},{"schemes":{"bearer":["read"]}}],
	  "skills":[{"id":"a","tags":[""],"examples":[]}],"n":0,"signatures":[{"protected":"x"}]}`
	want := `{"capabilities":{"pushNotifications":false,"streaming":false},"n":0,"name":"Example Agent",` +
		`"securityRequirements":[{"schemes":{"bearer":["read"]}}],"skills":[{"id":"a"}]}`
	got, err := cardsig.Payload([]byte(in))
	if err != nil || string(got) != want {
		t.Errorf("Payload = %s, %v\nwant %s", got, err, want)
	}
	if got, err := cardsig.Payload([]byte(`{"signatures":[],"a":{"b":[{}]}}`)); err != nil || string(got) != `{}` {
		t.Errorf("Payload of an all-default card = %s, %v; want {}", got, err)
	}
}

func TestPayloadRFC8785Numbers(t *testing.T) {
	t.Parallel()
	// RFC 8785 Appendix B: IEEE 754 bits -> JSON text.
	table := []struct{ bits, want string }{
		{"0000000000000000", "0"}, {"8000000000000000", "0"},
		{"0000000000000001", "5e-324"}, {"8000000000000001", "-5e-324"},
		{"7fefffffffffffff", "1.7976931348623157e+308"}, {"ffefffffffffffff", "-1.7976931348623157e+308"},
		{"4340000000000000", "9007199254740992"}, {"c340000000000000", "-9007199254740992"},
		{"4430000000000000", "295147905179352830000"},
		{"44b52d02c7e14af5", "9.999999999999997e+22"}, {"44b52d02c7e14af6", "1e+23"},
		{"44b52d02c7e14af7", "1.0000000000000001e+23"},
		{"444b1ae4d6e2ef4e", "999999999999999700000"}, {"444b1ae4d6e2ef4f", "999999999999999900000"},
		{"444b1ae4d6e2ef50", "1e+21"},
		{"3eb0c6f7a0b5ed8c", "9.999999999999997e-7"}, {"3eb0c6f7a0b5ed8d", "0.000001"},
		{"41b3de4355555553", "333333333.3333332"}, {"41b3de4355555554", "333333333.33333325"},
		{"41b3de4355555555", "333333333.3333333"}, {"41b3de4355555556", "333333333.3333334"},
		{"41b3de4355555557", "333333333.33333343"},
		{"becbf647612f3696", "-0.0000033333333333333333"},
		{"43143ff3c1cb0959", "1424953923781206.2"},
	}
	for _, c := range table {
		b, _ := hex.DecodeString(c.bits)
		f := math.Float64frombits(binary.BigEndian.Uint64(b))
		in := `{"n":` + strconv.FormatFloat(f, 'g', -1, 64) + `}`
		got, err := cardsig.Canonical([]byte(in))
		if want := `{"n":` + c.want + `}`; err != nil || string(got) != want {
			t.Errorf("%s: Canonical(%s) = %s, %v; want %s", c.bits, in, got, err, want)
		}
	}
}

// What JCS cannot canonicalize is refused, not guessed at: a duplicate
// member (two readers may keep different ones), a number beyond IEEE 754
// double range, and text that is not one JSON object.
func TestPayloadRefuses(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"name":"a","name":"b"}`,
		`{"n":1e400}`,
		`[1,2]`,
		`{"a":1} {"b":2}`,
		`{"a":`,
		``,
	} {
		if got, err := cardsig.Canonical([]byte(in)); err == nil {
			t.Errorf("Canonical(%q) = %s; want an error", in, got)
		}
		if got, err := cardsig.Payload([]byte(in)); err == nil {
			t.Errorf("Payload(%q) = %s; want an error", in, got)
		}
	}
}
