package skills

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// load_skill's spec is remembered per list of skills, and stays right
// for each list, past the bound too.
func TestLoadSpecPerSkillList(t *testing.T) {
	s := &Set{}
	enum := func(raw json.RawMessage) []string {
		var schema struct {
			Properties struct {
				Name struct {
					Enum []string `json:"enum"`
				} `json:"name"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		return schema.Properties.Name.Enum
	}
	for i := range maxLoadSpecs + 10 {
		a, b := &Skill{Name: fmt.Sprintf("a%d", i)}, &Skill{Name: "b"}
		for _, avail := range [][]*Skill{{a, b}, {b}, {a, b}} {
			want := make([]string, len(avail))
			for j, sk := range avail {
				want[j] = sk.Canonical()
			}
			spec := (&loadTool{set: s, avail: avail}).Spec()
			if got := enum(spec.InputSchema); !slices.Equal(got, want) {
				t.Fatalf("list %v: load_skill offers %v", want, got)
			}
		}
	}
	if n := s.loadSpecsN.Load(); n != maxLoadSpecs {
		t.Errorf("remembered %d specs; want the bound, %d", n, maxLoadSpecs)
	}
	one := (&loadTool{set: s, avail: []*Skill{{Name: "b"}}}).Spec()
	two := (&loadTool{set: s, avail: []*Skill{{Name: "b"}}}).Spec()
	if !bytes.Equal(one.InputSchema, two.InputSchema) || &one.InputSchema[0] != &two.InputSchema[0] {
		t.Errorf("the spec of one list was built twice")
	}
}
