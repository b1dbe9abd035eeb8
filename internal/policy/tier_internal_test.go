package policy

import (
	"testing"

	"cel.dev/cel-go/interpreter"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// TestDefaultPolicyFastPaths: the default policy's guarded rules get an untracked program for
// requests whose estimate stays within the limit, except the one whose cost grows faster than
// the request (a patch split into lines, each matched).
func TestDefaultPolicyFastPaths(t *testing.T) {
	t.Parallel()
	want := map[string]bool{"deny-rm-rf-root": true, "ask-force-push-main": true, "protect-secret-files": true, "protect-secret-files-patch": false}
	for _, r := range Default().byType[ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE] {
		w, ok := want[r.info.ID]
		if !ok {
			continue
		}
		delete(want, r.info.ID)
		if !r.when.guarded {
			t.Errorf("%s: not guarded", r.info.ID)
		}
		if got := r.when.fast != nil && r.when.fastBelow > 0; got != w {
			t.Errorf("%s: fast path %v (below %d bytes), want %v", r.info.ID, got, r.when.fastBelow, w)
		}
	}
	if len(want) > 0 {
		t.Errorf("rules not found: %v", want)
	}
}

// TestSmallRequest: only a known size, a third of the tier or less, of the evaluation's own
// activation (not a modify expression's changed input) counts as small.
func TestSmallRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		act  interpreter.Activation
		want bool
	}{
		{&activation{in: Input{RequestBytes: 1000}}, true},
		{&activation{in: Input{RequestBytes: 1365}}, true},
		{&activation{in: Input{RequestBytes: 1366}}, false},
		{&activation{in: Input{RequestBytes: 0}}, false},
		{&activation{in: Input{RequestBytes: -1}}, false},
		{&inputOverride{parent: &activation{in: Input{RequestBytes: 10}}}, false},
	} {
		if got := smallRequest(tc.act, 4096); got != tc.want {
			t.Errorf("%T %+v: small %v, want %v", tc.act, tc.act, got, tc.want)
		}
	}
}
