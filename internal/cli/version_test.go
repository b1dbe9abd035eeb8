package cli

import (
	"runtime/debug"
	"testing"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	if got := Version("v1.2.3"); got != "v1.2.3" {
		t.Errorf("stamped: %q", got)
	}
	if got := Version(""); got == "" {
		t.Error("unstamped: empty")
	}
	for _, c := range []struct {
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, true, "v0.4.0"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "dev"},
		{&debug.BuildInfo{}, true, "dev"},
		{nil, false, "dev"},
	} {
		if got := moduleVersion(c.bi, c.ok); got != c.want {
			t.Errorf("build info %+v: %q, want %q", c.bi, got, c.want)
		}
	}
}
