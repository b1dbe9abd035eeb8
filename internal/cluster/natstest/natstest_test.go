package natstest

import (
	"errors"
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

// A cluster node that cannot listen on its route port ends the start as a taken port (which
// Cluster retries on other ports), and the nodes started before it are stopped.
func TestClusterStartWithATakenPortStopsTheStartedNodes(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ports := freePorts(t, 6)
	ports[5] = taken.Addr().(*net.TCPAddr).Port // the last node's route port
	servers, err := launchCluster(t, ports)
	for _, s := range servers {
		t.Cleanup(s.Stop)
	}
	if _, ok := errors.AsType[*portTakenError](err); !ok || servers != nil {
		t.Fatalf("launchCluster = %v, %v; want a taken port and no servers", servers, err)
	}
	for _, p := range ports[:2] { // the first two nodes' client ports are free again
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Errorf("a started node still holds port %d: %v", p, err)
			continue
		}
		ln.Close()
	}
}
