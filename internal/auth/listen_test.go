package auth_test

import (
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/auth"
)

func TestCheckListenAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr string
		warn string // "" for no warning
	}{
		{"127.0.0.1:8080", ""},
		{"127.0.0.2:8080", ""},
		{"[::1]:8080", ""},
		{"localhost:8080", ""},
		{"/run/ahp.sock", ""},
		{":8080", "every network interface"},
		{"0.0.0.0:8080", "every network interface"},
		{"[::]:8080", "every network interface"},
		{"10.0.0.5:8080", "non-loopback address 10.0.0.5:8080"},
		{"ahp.internal:8080", "may not be a loopback address"},
	} {
		got := auth.CheckListenAddress(tc.addr, false)
		if tc.warn == "" && got != "" {
			t.Errorf("CheckListenAddress(%q, false) = %q, want no warning", tc.addr, got)
		}
		if tc.warn != "" && !strings.Contains(got, tc.warn) {
			t.Errorf("CheckListenAddress(%q, false) = %q, want a warning containing %q", tc.addr, got, tc.warn)
		}
		if got := auth.CheckListenAddress(tc.addr, true); got != "" {
			t.Errorf("CheckListenAddress(%q, true) = %q, want no warning", tc.addr, got)
		}
	}
}
