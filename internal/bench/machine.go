package bench

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// Machine describes where a benchmark ran; numbers mean little without it.
type Machine struct {
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUModel   string `json:"cpu_model"`
	LoadBefore string `json:"load_average_before"`
	LoadAfter  string `json:"load_average_after"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
}

// CurrentMachine reads the CPU count, model and load average (the last two from /proc on Linux;
// "unknown" elsewhere). LoadAfter is left for the caller to fill in with LoadAverage.
func CurrentMachine() Machine {
	return Machine{
		NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), CPUModel: cpuModel(),
		LoadBefore: LoadAverage(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
	}
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// LoadAverage returns the 1, 5 and 15 minute load averages ("0.52 0.61 0.70"), or "unknown".
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
