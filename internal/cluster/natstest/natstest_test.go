package natstest

import (
	"fmt"
	"net"
	"strings"
	"testing"
)

// A node whose port was taken between freePorts and nats-server's listen is started again on
// other ports, and the first start's failure is the one a taken port gives.
func TestStartFreshMovesOffATakenPort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var given []int
	s := startFresh(t, 1, func(ports []int) *Server {
		port := ports[0]
		if len(given) == 0 {
			port = taken.Addr().(*net.TCPAddr).Port
		}
		given = append(given, port)
		return &Server{t: t, name: "n1", port: port, args: []string{
			"-a", "127.0.0.1", "-p", fmt.Sprint(port), "-js", "-sd", t.TempDir(), "-n", "n1",
		}}
	})
	t.Cleanup(s.Stop)
	if len(given) != 2 || given[1] == given[0] {
		t.Fatalf("ports given %v, want the taken one and then another", given)
	}
	if !strings.Contains(s.Logs(), fmt.Sprintf("127.0.0.1:%d", given[1])) {
		t.Errorf("the node's logs do not show it listening on port %d:\n%s", given[1], s.Logs())
	}
	WaitJetStream(t, s.URL())
}

func TestFreePortsAreDistinct(t *testing.T) {
	ports := freePorts(t, 64)
	seen := make(map[int]bool, len(ports))
	for _, p := range ports {
		if seen[p] {
			t.Fatalf("port %d returned twice in %v", p, ports)
		}
		seen[p] = true
	}
}
