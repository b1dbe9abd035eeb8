package memlimit

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// tree writes files (path → content) under a fresh root.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func noEnv(string) string { return "" }

func TestCgroupLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		files  map[string]string
		limit  int64
		source string
		err    bool
	}{
		{"v2 container (namespaced: group /)", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "536870912\n",
		}, 512 << 20, "cgroup v2 /sys/fs/cgroup/memory.max", false},
		{"v2 unlimited", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "max\n",
		}, 0, "cgroup v2 /sys/fs/cgroup/memory.max", false},
		{"v2 nested: the smallest limit on the way up counts", map[string]string{
			"proc/self/cgroup": "0::/system.slice/ahp.service\n",
			"sys/fs/cgroup/system.slice/ahp.service/memory.max": "max\n",
			"sys/fs/cgroup/system.slice/memory.max":             "1073741824\n",
		}, 1 << 30, "cgroup v2 /sys/fs/cgroup/system.slice/memory.max", false},
		{"v1 in its group", map[string]string{
			"proc/self/cgroup": "12:cpu,cpuacct:/x\n4:memory:/docker/abc\n0::/\n",
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "268435456\n",
		}, 256 << 20, "cgroup v1 /sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", false},
		{"v1 in a container: the mount's root is the group", map[string]string{
			"proc/self/cgroup":                           "4:memory:/docker/abc\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "268435456\n",
		}, 256 << 20, "cgroup v1 /sys/fs/cgroup/memory/memory.limit_in_bytes", false},
		{"v1 unlimited", map[string]string{
			"proc/self/cgroup":                           "4:memory:/\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
		}, 0, "cgroup v1 /sys/fs/cgroup/memory/memory.limit_in_bytes", false},
		{"hybrid: v2 without the memory controller, v1 has it", map[string]string{
			"proc/self/cgroup":                           "4:memory:/\n0::/\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "104857600\n",
		}, 100 << 20, "cgroup v1 /sys/fs/cgroup/memory/memory.limit_in_bytes", false},
		{"no cgroups", map[string]string{"proc/self/cgroup": ""}, 0, "", true},
		{"no /proc", map[string]string{}, 0, "", true},
	} {
		limit, source, err := CgroupLimit(tree(t, tc.files))
		if limit != tc.limit || source != tc.source || (err != nil) != tc.err {
			t.Errorf("%s: got %d %q %v, want %d %q error %v", tc.name, limit, source, err, tc.limit, tc.source, tc.err)
		}
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	root := tree(t, map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "1000000000\n"})
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "GOMEMLIMIT" {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		value  string
		getenv func(string) string
		limit  int64
		source string
	}{
		{"auto", noEnv, 900000000, "90 % of cgroup v2 /sys/fs/cgroup/memory.max"},
		{"", noEnv, 900000000, "90 % of cgroup v2 /sys/fs/cgroup/memory.max"},
		{"300MiB", env("460MiB"), 300 << 20, "flag"},
		{"off", noEnv, 0, "off"},
		{"2GiB", noEnv, 2 << 30, "flag"},
	} {
		c, err := Decide(tc.value, tc.getenv, root, DefaultRatio)
		if err != nil || c.Limit != tc.limit || c.Source != tc.source {
			t.Errorf("%q: got %+v %v, want %d from %q", tc.value, c, err, tc.limit, tc.source)
		}
	}
	c, err := Decide("auto", noEnv, tree(t, map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "max\n"}), DefaultRatio)
	if err != nil || c.Limit != 0 || !strings.Contains(c.Source, "no limit") {
		t.Errorf("unlimited cgroup: %+v %v", c, err)
	}
	for _, bad := range []string{"12XB", "-5", "1.5GiB", "lots"} {
		if _, err := Decide(bad, noEnv, root, DefaultRatio); err == nil || strings.Contains(err.Error(), bad) {
			t.Errorf("%q: error %v, want one that does not echo the value", bad, err)
		}
	}
	// A set GOMEMLIMIT is the runtime's: reported as it is in force, never replaced.
	if c, err := Decide("auto", env("off"), root, DefaultRatio); err != nil || c.Source != "GOMEMLIMIT" || c.Limit != limitInForce() {
		t.Errorf("GOMEMLIMIT set: %+v %v", c, err)
	}
}

func limitInForce() int64 {
	if n := debug.SetMemoryLimit(-1); n != math.MaxInt64 {
		return n
	}
	return 0
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int64{"0": 0, "1000": 1000, "5B": 5, "2KiB": 2048, "460MiB": 460 << 20, "3GiB": 3 << 30, "1TiB": 1 << 40} {
		if got, err := ParseSize(s); err != nil || got != want {
			t.Errorf("%q: %d %v, want %d", s, got, err, want)
		}
	}
	if _, err := ParseSize("99999999999TiB"); err == nil {
		t.Error("overflow accepted")
	}
}
