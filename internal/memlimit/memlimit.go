// Package memlimit chooses the Go runtime's soft memory limit (debug.SetMemoryLimit) for a server
// in a container: by default 90 % of the memory limit of the process's control group (cgroup v2
// memory.max, else cgroup v1 memory.limit_in_bytes), unless GOMEMLIMIT is set, or a size or "off"
// given explicitly. With a limit the collector runs more often only as the heap nears it, instead
// of the kernel killing the process; far from it, GOGC alone paces collections as before.
package memlimit

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
)

// DefaultRatio is the share of the cgroup limit given to the Go runtime; the rest is headroom for
// memory the runtime does not count (the kernel's socket buffers, page cache of written files
// charged to the cgroup) and for the time the collector needs to react.
const DefaultRatio = 0.9

// Choice is the limit decided on and where it came from.
type Choice struct {
	// Limit in bytes; 0 when no limit is set (the runtime's default, none, stays).
	Limit int64
	// Source says where the limit came from, for the log: "flag", "GOMEMLIMIT", "cgroup v2
	// /sys/fs/cgroup/memory.max", …, or why there is none.
	Source string
	// CgroupLimit is the control group's limit the automatic choice was derived from (0: none).
	CgroupLimit int64
}

// Decide chooses the limit: value is "auto" (or ""), "off", or a size in GOMEMLIMIT's syntax
// ("460MiB", "2GiB", "1000000"). With "auto" a set GOMEMLIMIT (getenv) is left to the runtime,
// which has applied it already; otherwise the cgroup limit under root (normally "/") times ratio,
// if there is one. Decide does not change anything; Apply does.
func Decide(value string, getenv func(string) string, root string, ratio float64) (Choice, error) {
	switch v := strings.TrimSpace(value); strings.ToLower(v) {
	case "off":
		return Choice{Source: "off"}, nil
	case "", "auto":
		if getenv("GOMEMLIMIT") != "" {
			// The runtime has applied (and checked) it: report what is in force.
			c := Choice{Source: "GOMEMLIMIT"}
			if n := debug.SetMemoryLimit(-1); n != math.MaxInt64 {
				c.Limit = n
			}
			return c, nil
		}
		limit, source, err := CgroupLimit(root)
		if err != nil {
			return Choice{Source: "none (" + err.Error() + ")"}, nil
		}
		if limit == 0 {
			return Choice{Source: "none (" + source + " has no limit)"}, nil
		}
		return Choice{Limit: int64(float64(limit) * ratio), Source: fmt.Sprintf("%.0f %% of %s", ratio*100, source), CgroupLimit: limit}, nil
	default:
		n, err := ParseSize(v)
		if err != nil {
			return Choice{}, err
		}
		return Choice{Limit: n, Source: "flag"}, nil
	}
}

// Apply sets c.Limit as the runtime's soft memory limit. A choice from GOMEMLIMIT, or without a
// limit, changes nothing (the runtime read GOMEMLIMIT at start).
func (c Choice) Apply() {
	if c.Limit > 0 && c.Source != "GOMEMLIMIT" {
		debug.SetMemoryLimit(c.Limit)
	}
}

// ParseSize reads a byte count as GOMEMLIMIT does: a non-negative integer with an optional unit
// B, KiB, MiB, GiB or TiB.
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	num, unit := s, ""
	if i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		num, unit = s[:i], s[i:]
	}
	mult := map[string]int64{"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[unit]
	n, err := strconv.ParseInt(num, 10, 64)
	if mult == 0 || err != nil || n < 0 {
		return 0, errors.New("want a byte count with an optional unit B, KiB, MiB, GiB or TiB (e.g. 460MiB), auto or off")
	}
	if n > math.MaxInt64/mult {
		return 0, errors.New("byte count too large")
	}
	return n * mult, nil
}

// unlimitedV1 is where cgroup v1 reports "no limit" (the largest page-aligned int64, or more).
const unlimitedV1 = 1 << 60

// CgroupLimit returns the memory limit of the process's control group, as the file under root
// that says it (root is "/" outside tests): cgroup v2's memory.max of the process's group and
// each group above it (the smallest counts), else cgroup v1's memory.limit_in_bytes. 0 means the
// group has no limit; an error that no cgroup memory controller could be read.
func CgroupLimit(root string) (limit int64, source string, err error) {
	groups, err := readProcCgroup(path.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0, "", err
	}
	if g, ok := groups[""]; ok { // cgroup v2 (unified)
		if limit, source, ok := v2Limit(root, g); ok {
			return limit, source, nil
		}
	}
	if g, ok := groups["memory"]; ok { // cgroup v1
		// Inside a container the group's path may not exist in the mounted hierarchy, whose root
		// is then the container's own group.
		for _, dir := range []string{path.Join(root, "sys/fs/cgroup/memory", g), path.Join(root, "sys/fs/cgroup/memory")} {
			file := path.Join(dir, "memory.limit_in_bytes")
			n, err := readNumber(file)
			if err != nil {
				continue
			}
			if n >= unlimitedV1 {
				return 0, "cgroup v1 " + strings.TrimPrefix(file, root), nil
			}
			return n, "cgroup v1 " + strings.TrimPrefix(file, root), nil
		}
	}
	return 0, "", errors.New("no cgroup memory limit found")
}

// v2Limit walks from the process's group up to the hierarchy's root, taking the smallest
// memory.max; ok is false when no memory.max could be read at all.
func v2Limit(root, group string) (limit int64, source string, ok bool) {
	base := path.Join(root, "sys/fs/cgroup")
	for g := path.Clean("/" + group); ; g = path.Dir(g) {
		file := path.Join(base, g, "memory.max")
		b, err := os.ReadFile(file)
		if err == nil {
			text := strings.TrimSpace(string(b))
			if !ok {
				ok, source = true, "cgroup v2 "+strings.TrimPrefix(file, root)
			}
			if text != "max" {
				if n, err := strconv.ParseInt(text, 10, 64); err == nil && n > 0 && (limit == 0 || n < limit) {
					limit, source = n, "cgroup v2 "+strings.TrimPrefix(file, root)
				}
			}
		}
		if g == "/" {
			return limit, source, ok
		}
	}
}

// readProcCgroup maps each controller list of /proc/self/cgroup to the group path; the unified
// hierarchy (cgroup v2) is under "", v1 controllers under their names ("memory").
func readProcCgroup(file string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, sc.Err()
}

func readNumber(file string) (int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, err
	}
	return int64(min(n, math.MaxInt64)), nil
}
