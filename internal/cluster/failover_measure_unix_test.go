//go:build unix

package cluster_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// TestMeasureFailover measures, rather than checks, what losing a NATS node costs a replica:
// the node leads the JetStream meta group and the idempotency stream, and the replica was given
// only it. Four workers remember decisions (one each per millisecond at most, lookup budget 10 ms,
// the default) while the node is killed (SIGKILL: a crash), shut down (SIGTERM) or put in lame
// duck mode (SIGUSR2: what `nats-server --signal ldm` sends). It logs the reconnect time, the
// failover window (first to last fallback) and the fallbacks. Run it with
//
//	AHP_MEASURE_FAILOVER=1 go test -count=1 -run TestMeasureFailover -v ./internal/cluster/
func TestMeasureFailover(t *testing.T) {
	if os.Getenv("AHP_MEASURE_FAILOVER") == "" {
		t.Skip("a measurement: set AHP_MEASURE_FAILOVER=1 to run it")
	}
	for _, c := range []struct {
		name string
		sig  os.Signal
	}{{"kill", syscall.SIGKILL}, {"term", syscall.SIGTERM}, {"lame-duck", syscall.SIGUSR2}} {
		t.Run(c.name, func(t *testing.T) { measureFailover(t, c.sig) })
	}
}

func measureFailover(t *testing.T, sig os.Signal) {
	nodes := natstest.Cluster(t, 3)
	setup, _ := replicaOn(t, cluster.Config{Servers: []string{natstest.URLs(nodes)}, Replicas: 3, Name: "setup"}, nil)
	var victim *natstest.Server
	for _, n := range nodes {
		logs := n.Logs()
		if i := strings.LastIndex(logs, "metadata leader"); i >= 0 && strings.LastIndex(logs, "Self is new JetStream cluster metadata leader") == i-len("Self is new JetStream cluster ") {
			victim = n
		}
	}
	if victim == nil {
		t.Fatal("no meta leader in the nodes' logs")
	}
	for leader := ""; leader != victim.Name(); {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		leader = ""
		if s, err := setup.JetStream().Stream(ctx, "KV_ahp_idempotency"); err == nil {
			if info, err := s.Info(ctx); err == nil && info.Cluster != nil {
				leader = info.Cluster.Leader
			}
		}
		cancel()
		if leader != "" && leader != victim.Name() {
			_, _ = setup.NATS().Request("$JS.API.STREAM.LEADER.STEPDOWN.KV_ahp_idempotency", nil, 2*time.Second)
		}
	}
	logs := new(testkit.LogBuffer)
	conn, store := replicaOn(t, cluster.Config{Servers: []string{victim.URL()}, Replicas: 3, Name: "a"}, logs)

	type op struct {
		at     time.Duration
		failed bool
	}
	var (
		mu       sync.Mutex
		ops      []op
		signaled atomic.Int64
		okAfter  atomic.Int64
		stop     = make(chan struct{})
		warm     = make(chan struct{})
		settled  = make(chan struct{})
		once     [2]sync.Once
		wg       sync.WaitGroup
		n        atomic.Int64
	)
	start := time.Now()
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				i := n.Add(1)
				key := fmt.Sprintf("k-%d-%d", w, i)
				before := conn.Stats().Failures
				store.RememberDecision(key, &ahpv1.Decision{DecisionId: key})
				failed := conn.Stats().Failures != before
				at := time.Since(start)
				mu.Lock()
				ops = append(ops, op{at, failed})
				mu.Unlock()
				if i == 400 {
					once[0].Do(func() { close(warm) })
				}
				if s := signaled.Load(); s != 0 && at > time.Duration(s) && !failed && okAfter.Add(1) == 4000 {
					once[1].Do(func() { close(settled) })
				}
			}
		}()
	}
	testkit.Receive(t, warm, "the workers did not start")
	signaled.Store(int64(time.Since(start)))
	if err := victim.Signal(sig); err != nil {
		t.Fatal(err)
	}
	at := time.Duration(signaled.Load())
	select {
	case <-settled:
	case <-time.After(60 * time.Second):
		t.Log("not settled within 60 s")
	}
	close(stop)
	wg.Wait()
	var first, last time.Duration
	fails := 0
	for _, o := range ops {
		if o.failed && o.at > at {
			fails++
			if first == 0 {
				first = o.at
			}
			last = o.at
		}
	}
	window := time.Duration(0)
	if fails > 0 {
		window = last - first
	}
	st := conn.Stats()
	t.Logf("%v: %d operations, %d fell back after the signal (timeouts %d, skipped %d of which %d connected); first fallback %v after the signal, window %v; reconnects %d",
		sig, len(ops), fails, st.Timeouts, st.Skipped, st.SkippedConnected, (first - at).Round(time.Millisecond), window.Round(time.Millisecond), st.Reconnects)
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "level=INFO") || strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN") {
			t.Log(line)
		}
	}
}

// TestMeasureSilentLink measures how long a replica takes to leave a link that went silent
// (natstest.Proxy), with decisions flowing (one store operation per millisecond, lookup budget
// 10 ms) and idle (the client's pings at the default cluster.ping_interval, 5 s), and how many
// operations fell back meanwhile. Run it with
//
//	AHP_MEASURE_FAILOVER=1 go test -count=1 -run TestMeasureSilentLink -v ./internal/cluster/
func TestMeasureSilentLink(t *testing.T) {
	if os.Getenv("AHP_MEASURE_FAILOVER") == "" {
		t.Skip("a measurement: set AHP_MEASURE_FAILOVER=1 to run it")
	}
	for _, busy := range []bool{true, false} {
		t.Run(fmt.Sprintf("busy=%v", busy), func(t *testing.T) {
			nodes := natstest.Cluster(t, 3)
			proxy := natstest.NewProxy(t, nodes[0])
			logs := new(testkit.LogBuffer)
			conn, store := replicaOn(t, cluster.Config{Servers: []string{proxy.URL()}, Replicas: 3, Name: "a"}, logs)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			if busy {
				wg.Add(1)
				go func() {
					defer wg.Done()
					tick := time.NewTicker(time.Millisecond)
					defer tick.Stop()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						case <-tick.C:
						}
						store.RememberDecision(fmt.Sprintf("k-%d", i), &ahpv1.Decision{DecisionId: "d"})
					}
				}()
			}
			before := conn.Stats()
			silenced := time.Now()
			proxy.Silence()
			logs.WaitFor(t, "reconnected to NATS", 1)
			found := time.Since(silenced)
			logs.WaitFor(t, "NATS available again", 1)
			shared := time.Since(silenced)
			close(stop)
			wg.Wait()
			st := conn.Stats()
			t.Logf("busy=%v: reconnected %v after the link went silent, shared again after %v; %d operations fell back (%d timeouts, %d skipped), silent reconnects %d",
				busy, found.Round(time.Millisecond), shared.Round(time.Millisecond), st.Failures-before.Failures, st.Timeouts-before.Timeouts, st.Skipped-before.Skipped, st.SilentReconnects)
		})
	}
}
