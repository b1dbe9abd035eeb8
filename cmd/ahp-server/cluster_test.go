package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/testkit"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/types/known/structpb"
)

// replica is one ahp-server of a test cluster.
type replica struct {
	url    string
	stderr *clitest.Output
	stop   func() int
}

func (r replica) intercept() ahpv1connect.InterceptServiceClient {
	return ahpv1connect.NewInterceptServiceClient(testkit.H2CClient(), r.url)
}

// clusterConfig writes a config file whose cluster block names the replica and gives store
// operations a budget a loaded test machine can meet.
func clusterConfig(t *testing.T, name, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	doc := fmt.Sprintf("cluster:\n  name: %s\n  lookup_budget: 5s\n%s", name, extra)
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startReplicas starts n ahp-servers on the NATS servers at urls.
func startReplicas(t *testing.T, urls string, n int, args ...string) []replica {
	t.Helper()
	return startReplicasWith(t, urls, n, "", args...)
}

// startReplicasWith starts n ahp-servers whose cluster blocks add extra (YAML lines indented
// two spaces).
func startReplicasWith(t *testing.T, urls string, n int, extra string, args ...string) []replica {
	t.Helper()
	out := make([]replica, n)
	for i := range n {
		out[i] = startReplica(t, urls, fmt.Sprintf("r%c", 'a'+i), extra, args...)
	}
	return out
}

// startReplica starts the ahp-server replica name on the NATS servers at urls.
func startReplica(t *testing.T, urls, name, extra string, args ...string) replica {
	t.Helper()
	url, stderr, stop := startServer(t, append([]string{"-nats", urls, "-config", clusterConfig(t, name, extra)}, args...), nil)
	t.Cleanup(func() { stop() })
	return replica{url: url, stderr: stderr, stop: stop}
}

func TestClusterRetryOnAnotherReplicaIsReplayed(t *testing.T) {
	t.Parallel()
	nats := natstest.Start(t)
	rs := startReplicas(t, nats.URL(), 2, "-metrics-addr", "127.0.0.1:0")
	ctx := context.Background()
	ev := testkit.ShellEvent("retry-1", "ls", testkit.Source("urn:cluster-test"), testkit.Session("s1"))
	first, err := rs[0].intercept().Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
	if err != nil {
		t.Fatal(err)
	}
	again, err := rs[1].intercept().Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
	if err != nil {
		t.Fatal(err)
	}
	if d := again.Msg.GetDecision(); !d.GetReplayed() || d.GetDecisionId() != first.Msg.GetDecision().GetDecisionId() {
		t.Fatalf("retry on replica B = %v (replayed %v), want decision %s replayed", d.GetDecisionId(), d.GetReplayed(), first.Msg.GetDecision().GetDecisionId())
	}
	line := rs[1].stderr.Wait(t, func(line string) bool { return strings.Contains(line, "metrics listening") })
	_, addr, _ := strings.Cut(line, "addr=")
	resp, err := http.Get("http://" + strings.TrimSpace(addr) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{"ahp_cluster_connected 1", "ahp_cluster_degraded 0", `ahp_cluster_bucket_entries{bucket="idempotency"} 1`,
		"ahp_cluster_session_watching 1", "\nahp_cluster_session_queue_bytes ", `ahp_cluster_session_changes_dropped_total{reason="queue_full"} 0`,
		"\nahp_cluster_store_timeouts_total ", "ahp_cluster_session_sync_writes_total 0", "\nahp_cluster_session_writes_total ",
		// Nobody watches B: it does not receive A's Watch items at all (A's decision went to NATS
		// and nowhere else).
		"ahp_cluster_fanout_subscribed 0", `ahp_cluster_fanout_messages_total{direction="received"} 0`,
		`ahp_cluster_fanout_items_total{direction="received"} 0`, `ahp_cluster_fanout_messages_total{direction="sent"} `,
		// The retry's claim on B found A's decision: one timed idempotency claim at least.
		`ahp_cluster_store_duration_seconds_bucket{op="claim",store="idempotency",le="+Inf"} `} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestClusterSameEventAtTwoReplicasGetsOneDecision(t *testing.T) {
	t.Parallel()
	nats := natstest.Start(t)
	rs := startReplicas(t, nats.URL(), 2)
	clients := []ahpv1connect.InterceptServiceClient{rs[0].intercept(), rs[1].intercept()}
	const events = 40
	for i := range events {
		ev := testkit.ShellEvent(fmt.Sprintf("race-%d", i), "ls", testkit.Source("urn:cluster-test"), testkit.Session("s1"))
		var (
			wg   sync.WaitGroup
			got  [2]*ahpv1.Decision
			errs [2]error
		)
		start := make(chan struct{})
		for r := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				resp, err := clients[r].Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
				if err != nil {
					errs[r] = err
					return
				}
				got[r] = resp.Msg.GetDecision()
			}()
		}
		close(start)
		wg.Wait()
		for r := range 2 {
			if errs[r] != nil {
				t.Fatalf("event %d on replica %d: %v", i, r, errs[r])
			}
		}
		if got[0].GetDecisionId() != got[1].GetDecisionId() {
			t.Fatalf("event %d: replicas answered decisions %s and %s, want one", i, got[0].GetDecisionId(), got[1].GetDecisionId())
		}
		if got[0].GetReplayed() == got[1].GetReplayed() {
			t.Fatalf("event %d: replayed = %v and %v, want exactly one replay", i, got[0].GetReplayed(), got[1].GetReplayed())
		}
	}
}

func TestClusterLockoutCountsDenialsOfEveryReplica(t *testing.T) {
	t.Parallel()
	nats := natstest.Start(t)
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte(testkit.PolicyYAML("lockout", `  - id: lockout
    on: [tool.before]
    when: 'session.deny_count >= 2'
    effect: {deny: {reason: "locked out", code: dev.ahpgateway.test.lockout}}
`)), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := startReplicas(t, nats.URL(), 2, "-policy", pol)
	ctx := context.Background()
	decide := func(r int, id, command string) *ahpv1.Decision {
		t.Helper()
		ev := testkit.ShellEvent(id, command, testkit.Source("urn:cluster-test"), testkit.Session("lock"))
		resp, err := rs[r].intercept().Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Msg.GetDecision()
	}
	if d := decide(0, "l1", "rm a"); d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
		t.Fatalf("rm on A = %v, want deny", d.GetVerdict())
	}
	if d := decide(1, "l2", "rm b"); d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
		t.Fatalf("rm on B = %v, want deny", d.GetVerdict())
	}
	// B's denial reaches A's session memory once B has stored it and A's watch delivered it
	// (docs/cluster.md: well under a millisecond on loopback): ask A, with queries, which are
	// decided but not remembered, until its view counts both denials.
	harness := ahpv1connect.NewHarnessServiceClient(testkit.H2CClient(), rs[0].url)
	ls := structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"action": structpb.NewStringValue("ls")}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := harness.Query(ctx, connect.NewRequest(&ahpv1.QueryRequest{
			SessionId: "lock", QueryType: "should_i_proceed", Payload: ls, Source: "urn:cluster-test",
		}))
		if err != nil {
			t.Fatal(err)
		}
		if ids := resp.Msg.GetDecision().GetMatchedRuleIds(); len(ids) > 0 && ids[0] == "lockout" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("A's session memory never counted B's denial (10 s)")
		}
	}
	d := decide(0, "l3", "ls")
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY || len(d.GetMatchedRuleIds()) == 0 || d.GetMatchedRuleIds()[0] != "lockout" {
		t.Fatalf("ls on A after a denial on each replica = %v %v, want the lockout rule's deny (two denials counted)", d.GetVerdict(), d.GetMatchedRuleIds())
	}
}

func (r replica) observe() ahpv1connect.ObservationServiceClient {
	return ahpv1connect.NewObservationServiceClient(testkit.H2CClient(), r.url)
}

// watchItems opens a Watch on r and delivers its items on a channel until the test ends.
func watchItems(t *testing.T, r replica, req *ahpv1.WatchRequest) <-chan *ahpv1.WatchResponse {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := r.observe().Watch(ctx, connect.NewRequest(req))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	items := make(chan *ahpv1.WatchResponse, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(items)
		for stream.Receive() {
			items <- stream.Msg()
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return items
}

// awaitFanout sends probe events to each of from until watch (a Watch on another replica's
// probe session) has received one from each: the NATS interest of the watching replica has
// reached the servers the others publish to.
func awaitFanout(t *testing.T, watch <-chan *ahpv1.WatchResponse, from []replica) {
	t.Helper()
	for i, r := range from {
		for k := 0; ; k++ {
			if k == 100 {
				t.Fatalf("replica %d: no probe reached the watching replica in 100 tries", i)
			}
			ev := testkit.ShellEvent(fmt.Sprintf("probe-%d-%d", i, k), "ls", testkit.Source("urn:probe"), testkit.Session("probe"))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			_, err := r.intercept().Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
			cancel()
			if err != nil {
				t.Fatalf("probe to replica %d: %v\n%s", i, err, r.stderr.String())
			}
			select {
			case it := <-watch:
				if it.GetEvent().GetId() != ev.GetId() {
					continue // an earlier probe arriving late
				}
			case <-time.After(100 * time.Millisecond):
				continue // not routed yet: probe again
			}
			break
		}
	}
}

func TestClusterWatchOnOneReplicaSeesEveryReplicaOnce(t *testing.T) {
	t.Parallel()
	nodes := natstest.Cluster(t, 3)
	rs := startReplicasWith(t, natstest.URLs(nodes), 3, "  replicas: 3\n")
	main := watchItems(t, rs[0], &ahpv1.WatchRequest{SessionId: "main"})
	awaitFanout(t, watchItems(t, rs[0], &ahpv1.WatchRequest{SessionId: "probe"}), rs[1:])

	const perReplica = 20
	want := map[string]bool{}
	for i, r := range rs {
		for j := range perReplica {
			ev := testkit.ShellEvent(fmt.Sprintf("w-%d-%d", i, j), "ls", testkit.Source("urn:cluster-test"), testkit.Session("main"))
			resp, err := r.intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
			if err != nil {
				t.Fatal(err)
			}
			want[resp.Msg.GetDecision().GetDecisionId()] = true
		}
		obs := testkit.ShellEvent(fmt.Sprintf("o-%d", i), "ls", testkit.Source("urn:cluster-test"), testkit.Session("main"), testkit.Type(ahpv1.EventType_EVENT_TYPE_TOOL_AFTER))
		if _, err := r.observe().Observe(context.Background(), connect.NewRequest(&ahpv1.ObserveRequest{Event: obs})); err != nil {
			t.Fatal(err)
		}
		want["observation "+obs.GetId()] = true
	}
	seen := map[string]bool{}
	for len(seen) < len(want) {
		it := testkit.Receive(t, main, "a Watch item")
		key := it.GetDecision().GetDecisionId()
		if it.GetDecision() == nil {
			key = "observation " + it.GetEvent().GetId()
		}
		if !want[key] || seen[key] {
			t.Fatalf("Watch on replica A got %q: unknown or seen before", key)
		}
		seen[key] = true
	}
	// Exactly once: a sentinel sent after everything else is the next item, no duplicate before it.
	sentinel := testkit.ShellEvent("sentinel", "ls", testkit.Source("urn:cluster-test"), testkit.Session("main"))
	if _, err := rs[2].intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: sentinel})); err != nil {
		t.Fatal(err)
	}
	if it := testkit.Receive(t, main, "the sentinel"); it.GetEvent().GetId() != "sentinel" {
		t.Fatalf("after all items, Watch got %s again before the sentinel", it.GetEvent().GetId())
	}
}

func TestClusterPolicyPushSwitchesEveryReplica(t *testing.T) {
	t.Parallel()
	nats := natstest.Start(t)
	rs := startReplicas(t, nats.URL(), 3)
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.yaml", testkit.PolicyYAML("pushed", ""))
	broken := write("broken.yaml", "version: 1\nrules:\n  - id: broken\n    when: 'input.('\n    effect: {deny: {reason: r}}\n")

	if r := runServer([]string{"policy", "push", "-nats", nats.URL(), broken}, nil); r.Code != 1 || !strings.Contains(r.Stderr, "not pushed") {
		t.Fatalf("push of a broken policy: exit %d, stderr %q; want 1 and nothing pushed", r.Code, r.Stderr)
	}
	r := runServer([]string{"policy", "push", "-nats", nats.URL(), good}, nil)
	if r.Code != 0 || !strings.Contains(r.Stdout, "revision 1") {
		t.Fatalf("push: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	for i, rep := range rs {
		rep.stderr.Wait(t, func(line string) bool {
			return strings.Contains(line, "policy switched") && strings.Contains(line, "revision=1")
		})
		ev := testkit.ShellEvent(fmt.Sprintf("after-push-%d", i), "rm -rf x", testkit.Source("urn:cluster-test"))
		resp, err := rep.intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
		if err != nil {
			t.Fatal(err)
		}
		d := resp.Msg.GetDecision()
		if d.GetPolicyRevision() != 1 || !strings.HasPrefix(d.GetPolicyDigest(), "sha256:") || d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
			t.Fatalf("replica %d after the push: revision %d, digest %q, verdict %v; want revision 1 denying rm", i, d.GetPolicyRevision(), d.GetPolicyDigest(), d.GetVerdict())
		}
	}

	// A value that does not compile, written past the push command's check, is logged once by
	// each replica and ignored.
	nc, err := natsgo.Connect(nats.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(context.Background(), "ahp_policy")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(context.Background(), "current", []byte("version: 1\nrules: [{id: x, when: '(', effect: {deny: {reason: r}}}]\n")); err != nil {
		t.Fatal(err)
	}
	for i, rep := range rs {
		rep.stderr.Wait(t, func(line string) bool {
			return strings.Contains(line, "does not compile") && strings.Contains(line, "revision=2")
		})
		ev := testkit.ShellEvent(fmt.Sprintf("after-bad-%d", i), "ls", testkit.Source("urn:cluster-test"))
		resp, err := rep.intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
		if err != nil {
			t.Fatal(err)
		}
		if rev := resp.Msg.GetDecision().GetPolicyRevision(); rev != 1 {
			t.Fatalf("replica %d after a broken value: decided by revision %d, want 1 still", i, rev)
		}
		if n := strings.Count(rep.stderr.String(), "does not compile"); n != 1 {
			t.Fatalf("replica %d logged the broken value %d times, want once", i, n)
		}
	}
}

func TestClusterAuditStreamHoldsEveryDecisionOnceAndEachChainVerifies(t *testing.T) {
	t.Parallel()
	nats := natstest.Start(t)
	var rs []replica
	for _, name := range []string{"ra", "rb"} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "config.yaml")
		doc := fmt.Sprintf("cluster: {name: %s, lookup_budget: 5s}\naudit: {path: %s, required: true, nats: true}\n", name, filepath.Join(dir, "audit.jsonl"))
		if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		url, stderr, stop := startServer(t, []string{"-nats", nats.URL(), "-config", cfg}, nil)
		rs = append(rs, replica{url: url, stderr: stderr, stop: stop})
	}
	decided := map[string]string{} // decision id -> replica
	for i := range 30 {
		r := i % 2
		ev := testkit.ShellEvent(fmt.Sprintf("a-%d", i), "ls", testkit.Source("urn:cluster-test"), testkit.Session("audit"))
		resp, err := rs[r].intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
		if err != nil {
			t.Fatal(err)
		}
		decided[resp.Msg.GetDecision().GetDecisionId()] = []string{"ra", "rb"}[r]
		if r == 1 { // a retry on the other replica is a replay: recorded as such, not as a new decision
			if _, err := rs[0].intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: ev})); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, r := range rs {
		if code := r.stop(); code != 0 {
			t.Fatalf("exit %d: %s", code, r.stderr.String())
		}
	}
	out := filepath.Join(t.TempDir(), "export")
	res := runServer([]string{"audit", "export", "-nats", nats.URL(), "-dir", out}, nil)
	if res.Code != 0 {
		t.Fatalf("audit export: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	seen := map[string]bool{}
	for _, name := range []string{"ra", "rb"} {
		path := filepath.Join(out, name+".jsonl")
		if want := fmt.Sprintf("%s: 15 records", path); !strings.Contains(res.Stdout, want) {
			t.Fatalf("export output %q lacks %q: each decision exactly once", res.Stdout, want)
		}
		decisions, _ := auditIDs(t, path)
		for id := range decisions {
			if decided[id] != name {
				t.Fatalf("%s holds decision %s, made by %q", path, id, decided[id])
			}
			seen[id] = true
		}
		if r := runServer([]string{"audit", "verify", path}, nil); r.Code != 0 {
			t.Fatalf("audit verify %s: %d %s %s", path, r.Code, r.Stdout, r.Stderr)
		}
	}
	if len(seen) != len(decided) {
		t.Fatalf("the stream holds %d of the %d decisions", len(seen), len(decided))
	}
	if again := runServer([]string{"audit", "export", "-nats", nats.URL(), "-dir", out}, nil); again.Code == 0 {
		t.Fatal("a second export into the same directory overwrote the files")
	}
}

// health asks r's gRPC health service (Connect protocol, JSON) for the overall status.
func health(t *testing.T, r replica) string {
	t.Helper()
	resp, err := testkit.H2CClient().Post(r.url+"/grpc.health.v1.Health/Check", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.Status
}

func TestClusterFailClosedWhileNATSIsDownAndSharedModeReturns(t *testing.T) {
	t.Parallel()
	nats := natstest.Start(t)
	rs := startReplicasWith(t, nats.URL(), 1, "  on_unavailable: fail-closed\n", "-cluster-ready-required")
	r := rs[0]
	decide := func(id string) *ahpv1.Decision {
		t.Helper()
		ev := testkit.ShellEvent(id, "ls", testkit.Source("urn:cluster-test"), testkit.Session("fc"))
		resp, err := r.intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Msg.GetDecision()
	}
	if d := decide("fc-1"); d.GetSynthetic() || d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("with NATS up: %v synthetic=%v, want a policy allow", d.GetVerdict(), d.GetSynthetic())
	}
	if s := health(t, r); s != "SERVING" && s != "SERVING_STATUS_SERVING" {
		t.Fatalf("health with NATS up = %q", s)
	}
	nats.Stop()
	r.stderr.Wait(t, func(line string) bool { return strings.Contains(line, "NATS unavailable; failing closed") })
	d := decide("fc-2")
	if !d.GetSynthetic() || d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY || d.GetEffects()[0].GetDeny().GetCode() != "dev.ahpgateway.cluster.unavailable" {
		t.Fatalf("with NATS down: %v synthetic=%v effects=%v, want the labelled cluster-unavailable denial", d.GetVerdict(), d.GetSynthetic(), d.GetEffects())
	}
	if s := health(t, r); strings.HasSuffix(s, "SERVING") && !strings.Contains(s, "NOT") {
		t.Fatalf("health with NATS down = %q, want NOT_SERVING (-cluster-ready-required)", s)
	}
	nats.Restart()
	r.stderr.Wait(t, func(line string) bool { return strings.Contains(line, "NATS available again") })
	if d := decide("fc-3"); d.GetSynthetic() || d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("after NATS returned: %v synthetic=%v, want a policy allow again", d.GetVerdict(), d.GetSynthetic())
	}
	if n := strings.Count(r.stderr.String(), "NATS unavailable"); n != 1 {
		t.Fatalf("the outage was logged %d times, want once", n)
	}
}

func TestClusterDegradeDecidesLocallyWhileNATSIsDown(t *testing.T) {
	t.Parallel()
	nats := natstest.Start(t)
	r := startReplicas(t, nats.URL(), 1)[0]
	nats.Stop()
	r.stderr.Wait(t, func(line string) bool { return strings.Contains(line, "deciding with local stores") })
	ev := testkit.ShellEvent("dg-1", "ls", testkit.Source("urn:cluster-test"), testkit.Session("dg"))
	first, err := r.intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
	if err != nil {
		t.Fatal(err)
	}
	if d := first.Msg.GetDecision(); d.GetSynthetic() || d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("degraded decision = %v synthetic=%v, want the policy's own allow", d.GetVerdict(), d.GetSynthetic())
	}
	again, err := r.intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
	if err != nil {
		t.Fatal(err)
	}
	if !again.Msg.GetDecision().GetReplayed() {
		t.Fatal("a retry while degraded was not replayed from the local store")
	}
}

// Under load on a three-node NATS, losing one node fails no call and loses no decision, and the
// failover is one window that closes while the node is still down. A decision is shared when a
// retry of it on the other replica is replayed with the same decision id; it is in every wave
// before the node stops, and once a wave is shared again after it, in every later wave. Every
// decision not shared is explained by a counted store failure, and the decisions made after the
// stop and retried only once the failover is over are all replayed (what a replica decided with
// its local stores is written to the bucket when it answers again).
//
// Replica A is given only the node that goes and learns the others from it (INFO), so it
// reconnects, and the node that goes leads the JetStream meta group: while the survivors elect a
// new meta leader (seconds: RAFT election timeouts), JetStream's account information does not
// answer. What else the node leads differs:
//   - the idempotency stream's leader stays: decisions must be shared again from the wave after
//     the one in flight when the node stopped, and A's degraded period must end while JetStream
//     still has no meta leader (the checks must not take a meta election for an outage: the
//     stream answers, and so do trial operations);
//   - the idempotency stream's leader goes too: its survivors elect a new one, and waves may fall
//     back until they have.
func TestClusterLosingOneNATSNodeFailsNoCall(t *testing.T) {
	t.Parallel()
	for _, leaderGoes := range []bool{false, true} {
		name := "stream-leader-stays"
		if leaderGoes {
			name = "stream-leader-goes"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			loseOneNode(t, leaderGoes)
		})
	}
}

const idempotencyStream = "KV_ahp_idempotency"

func loseOneNode(t *testing.T, leaderGoes bool) {
	nodes := natstest.Cluster(t, 3)
	victim := metaLeader(t, nodes)
	rs := []replica{
		startReplica(t, victim.URL(), "ra", "  replicas: 3\n", "-metrics-addr", "127.0.0.1:0"),
		startReplica(t, natstest.URLs(nodes), "rb", "  replicas: 3\n", "-metrics-addr", "127.0.0.1:0"),
	}
	moveStreamLeader(t, nodes, idempotencyStream, victim.Name(), leaderGoes)
	var survivors []*natstest.Server
	for _, n := range nodes {
		if n != victim {
			survivors = append(survivors, n)
		}
	}
	const (
		wave     = 20 // calls per wave, half on each replica
		maxWaves = 100
		settled  = 3 // shared waves in a row after the failover
	)
	event := func(w, i int) *ahpv1.Event {
		return testkit.ShellEvent(fmt.Sprintf("load-%d-%d", w, i), "ls", testkit.Source("urn:cluster-test"), testkit.Session(fmt.Sprintf("load-%d", i%8)))
	}
	available := func(r replica) int { return strings.Count(r.stderr.String(), "NATS available again") }
	// Decisions made after the node stopped and not retried until the failover is over, by
	// replica: those made with the local stores must reach the bucket once it answers.
	late := map[string]string{} // event id → decision id
	lateEvent := func(id string) *ahpv1.Event {
		return testkit.ShellEvent(id, "ls", testkit.Source("urn:cluster-test"), testkit.Session("late"))
	}
	// runWave makes wave decisions concurrently (stopping the node while they are in flight when
	// kill is set), then retries each on the other replica; it returns how many were replayed.
	runWave := func(w int, kill bool) int {
		var (
			wg   sync.WaitGroup
			ids  [wave]string
			errs [wave]error
		)
		stopped := make(chan struct{})
		if kill {
			go func() { victim.Stop(); close(stopped) }()
		} else {
			close(stopped)
		}
		for i := range wave {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := rs[i%2].intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: event(w, i)}))
				if err != nil {
					errs[i] = err
					return
				}
				ids[i] = resp.Msg.GetDecision().GetDecisionId()
			}()
		}
		wg.Wait()
		<-stopped
		if w >= 2 {
			for i := range 2 {
				id := fmt.Sprintf("late-%d-%d", w, i)
				resp, err := rs[i].intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: lateEvent(id)}))
				if err != nil {
					t.Fatalf("late decision %s: %v", id, err)
				}
				late[id] = resp.Msg.GetDecision().GetDecisionId()
			}
		}
		for i, err := range errs {
			if err != nil {
				t.Fatalf("wave %d call %d failed (a NATS node stopping must fail no call): %v", w, i, err)
			}
		}
		replayed := 0
		for i := range wave {
			resp, err := rs[(i+1)%2].intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: event(w, i)}))
			if err != nil {
				t.Fatalf("wave %d retry %d: %v", w, i, err)
			}
			if d := resp.Msg.GetDecision(); d.GetReplayed() && d.GetDecisionId() == ids[i] {
				replayed++
			}
		}
		return replayed
	}
	for w := range 2 {
		if n := runWave(w, false); n != wave {
			t.Fatalf("before any node stopped, wave %d: %d of %d decisions shared\nA:\n%s\nB:\n%s", w, n, wave, rs[0].stderr, rs[1].stderr)
		}
	}
	var failuresBefore float64
	for _, r := range rs {
		failuresBefore += metricValue(t, r, "ahp_cluster_store_failures_total")
	}
	unshared, failoverWaves, inRow := 0, 0, 0
	for w := 2; inRow < settled; w++ {
		if w-2 == maxWaves {
			t.Fatalf("decisions not shared again after %d waves with one node of three down (%d not shared)", maxWaves, unshared)
		}
		before := []int{available(rs[0]), available(rs[1])}
		var meta chan error
		if w == 2 && !leaderGoes {
			// A's degraded period (its connection moving) must end while the survivors still
			// elect their meta leader: its checks must not wait for one. Asked the moment it
			// ends, while the wave's calls (some waiting out their budget) go on.
			meta = make(chan error, 1)
			go func() {
				seen := 0
				if rs[0].stderr.Wait(errorsOnly{t}, func(line string) bool {
					if strings.Contains(line, "NATS available again") {
						seen++
					}
					return seen > before[0]
				}) == "" {
					meta <- errors.New("no end of the degraded period")
					return
				}
				meta <- metaAnswers(survivors)
			}()
		}
		n := runWave(w, w == 2)
		if meta != nil {
			if err := <-meta; err == nil {
				t.Fatal("replica A was degraded until JetStream had elected a new meta leader, though the idempotency stream kept its leader")
			}
		}
		switch {
		case n == wave:
			inRow++
			continue
		case inRow > 0:
			t.Fatalf("wave %d: %d of %d decisions shared after %d shared waves: the failover window reopened", w, n, wave, inRow)
		case !leaderGoes && w > 2:
			t.Fatalf("wave %d, after the one in flight when the node stopped: %d of %d decisions shared, though the idempotency stream kept its leader", w, n, wave)
		}
		unshared += wave - n
		failoverWaves++
		if !leaderGoes {
			continue
		}
		// A replica degraded by its checks (nothing answering) skips NATS until they pass: wait
		// for that rather than spin through waves decided locally in microseconds.
		for i, r := range rs {
			if metricValue(t, r, "ahp_cluster_degraded") == 1 {
				seen := 0
				r.stderr.Wait(t, func(line string) bool {
					if strings.Contains(line, "NATS available again") {
						seen++
					}
					return seen > before[i]
				})
			}
		}
	}
	// What was decided locally during the failover is in the bucket by now, or being written.
	written := 0.0
	for _, r := range rs {
		done := strings.Count(r.stderr.String(), "are in the bucket now")
		if metricValue(t, r, "ahp_cluster_idempotency_write_back_pending_bytes") > 0 {
			seen := 0
			r.stderr.Wait(t, func(line string) bool {
				if strings.Contains(line, "are in the bucket now") {
					seen++
				}
				return seen > done
			})
		}
		written += metricValueLabelled(t, r, `ahp_cluster_idempotency_write_back_total{outcome="written"}`)
	}
	for id, decision := range late {
		other := rs[0]
		if strings.HasSuffix(id, "-0") {
			other = rs[1]
		}
		resp, err := other.intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: lateEvent(id)}))
		if err != nil {
			t.Fatal(err)
		}
		if d := resp.Msg.GetDecision(); !d.GetReplayed() || d.GetDecisionId() != decision {
			t.Fatalf("%s, decided during or after the failover, retried on the other replica once it was over: %s (replayed %v), want %s replayed",
				id, d.GetDecisionId(), d.GetReplayed(), decision)
		}
	}
	var failures, skippedUp, timeouts float64
	for _, r := range rs {
		failures += metricValue(t, r, "ahp_cluster_store_failures_total")
		skippedUp += metricValueLabelled(t, r, `ahp_cluster_store_skipped_total{connection="up"}`)
		timeouts += metricValue(t, r, "ahp_cluster_store_timeouts_total")
	}
	if float64(unshared) > failures-failuresBefore {
		t.Fatalf("%d decisions were not shared during the failover, but only %v store operations failed", unshared, failures-failuresBefore)
	}
	t.Logf("failover: %d waves of %d with decisions not shared (%d decisions), then shared again with the node down; store failures %v (%v timeouts, %v skipped while connected and degraded); %v local decisions written back after it",
		failoverWaves, wave, unshared, failures-failuresBefore, timeouts, skippedUp, written)
}

// metaLeader returns the node that leads the JetStream meta group, from the nodes' logs.
func metaLeader(t *testing.T, nodes []*natstest.Server) *natstest.Server {
	t.Helper()
	var leader *natstest.Server
	for _, n := range nodes {
		logs := n.Logs()
		if i := strings.LastIndex(logs, "metadata leader"); i >= 0 && strings.LastIndex(logs, "Self is new JetStream cluster metadata leader") == i-len("Self is new JetStream cluster ") {
			if leader != nil {
				t.Fatalf("two nodes say they lead the meta group: %s and %s", leader.Name(), n.Name())
			}
			leader = n
		}
	}
	if leader == nil {
		t.Fatal("no node says it leads the JetStream meta group")
	}
	return leader
}

// errorsOnly turns Fatalf into Errorf, for a wait in a goroutine other than the test's.
type errorsOnly struct{ testing.TB }

func (e errorsOnly) Fatalf(format string, args ...any) { e.TB.Errorf(format, args...) }

// metaAnswers asks the nodes for JetStream's account information, which only the meta leader
// gives: nil once a meta leader answers.
func metaAnswers(nodes []*natstest.Server) error {
	nc, err := natsgo.Connect(natstest.URLs(nodes))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = js.AccountInfo(ctx)
	return err
}

// moveStreamLeader makes the node named on lead stream (want true) or another node (want false),
// by asking the current leader to step down until it is so.
func moveStreamLeader(t *testing.T, nodes []*natstest.Server, stream, on string, want bool) {
	t.Helper()
	nc, err := natsgo.Connect(natstest.URLs(nodes))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testkit.WaitTimeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var leader string
		if s, err := js.Stream(ctx, stream); err == nil {
			if info, err := s.Info(ctx); err == nil && info.Cluster != nil {
				leader = info.Cluster.Leader
			}
		}
		cancel()
		switch {
		case leader == "":
			continue // electing
		case (leader == on) == want:
			// Then until the leader takes writes (a new one may still be catching up).
			if kv, err := js.KeyValue(context.Background(), strings.TrimPrefix(stream, "KV_")); err == nil {
				for time.Now().Before(deadline) {
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
					_, err := kv.Put(ctx, "test.leader-moved", []byte{1})
					cancel()
					if err == nil {
						return
					}
				}
			}
			t.Fatalf("%s does not take writes after its leader moved", stream)
		}
		// A stepdown elects another peer; asked again until the right one leads.
		if _, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+stream, nil, 2*time.Second); err != nil {
			t.Logf("stepdown of %s: %v", stream, err)
		}
	}
	t.Fatalf("could not make %s lead %s (want %v) within %v", on, stream, want, testkit.WaitTimeout)
}

// With on_start_unavailable degrade and NATS not running yet, the replicas start at once and
// decide with their local stores (not ready, with -cluster-ready-required); when NATS starts they
// attach every bucket and stream in the background and become ready, after which a retry on the
// other replica is replayed and a pushed policy replaces the local one.
func TestClusterDegradeAtStartAttachesWhenNATSComes(t *testing.T) {
	t.Parallel()
	nats := natstest.Later(t)
	rs := startReplicasWith(t, nats.URL(), 2, "  on_start_unavailable: degrade\n", "-cluster-ready-required")
	ctx := context.Background()
	decide := func(r replica, ev *ahpv1.Event) *ahpv1.Decision {
		t.Helper()
		resp, err := r.intercept().Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Msg.GetDecision()
	}
	serving := func(s string) bool { return strings.HasSuffix(s, "SERVING") && !strings.Contains(s, "NOT") }
	ev := testkit.ShellEvent("das-1", "ls", testkit.Source("urn:cluster-test"), testkit.Session("das"))
	if d := decide(rs[0], ev); d.GetSynthetic() || d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("decision with NATS not started: %v synthetic=%v, want the local policy's allow", d.GetVerdict(), d.GetSynthetic())
	}
	if !decide(rs[0], ev).GetReplayed() {
		t.Fatal("a retry on the same replica before NATS came was not replayed from the local store")
	}
	for i, r := range rs {
		if s := health(t, r); serving(s) {
			t.Fatalf("replica %d health before NATS started = %q, want not serving", i, s)
		}
		for _, want := range []string{"idempotency bucket ahp_idempotency not available at start", "approval bucket ahp_approvals not available at start",
			"policy bucket ahp_policy not available at start"} {
			if !strings.Contains(r.stderr.String(), want) {
				t.Errorf("replica %d did not log %q", i, want)
			}
		}
	}

	nats.Run()
	// Each attachment and the end of the degraded period are logged once each, after they took
	// effect: then the replica is ready.
	for i, r := range rs {
		for _, want := range []string{"NATS available again", "idempotency bucket ahp_idempotency attached", "approval bucket ahp_approvals attached",
			"session bucket ahp_sessions attached", "policy bucket ahp_policy attached"} {
			r.stderr.Wait(t, func(line string) bool { return strings.Contains(line, want) })
		}
		if s := health(t, r); !serving(s) {
			t.Fatalf("replica %d health after every store attached = %q, want serving", i, s)
		}
	}
	ev2 := testkit.ShellEvent("das-2", "ls", testkit.Source("urn:cluster-test"), testkit.Session("das"))
	first := decide(rs[0], ev2)
	if again := decide(rs[1], ev2); !again.GetReplayed() || again.GetDecisionId() != first.GetDecisionId() {
		t.Fatalf("retry on replica B after NATS came = %s (replayed %v), want %s replayed", again.GetDecisionId(), again.GetReplayed(), first.GetDecisionId())
	}

	// The local policy served until now; a pushed one replaces it on both replicas.
	path := filepath.Join(t.TempDir(), "pushed.yaml")
	if err := os.WriteFile(path, []byte(testkit.PolicyYAML("pushed", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runServer([]string{"policy", "push", "-nats", nats.URL(), path}, nil); r.Code != 0 {
		t.Fatalf("push: exit %d, stderr %q", r.Code, r.Stderr)
	}
	for i, r := range rs {
		r.stderr.Wait(t, func(line string) bool {
			return strings.Contains(line, "policy switched") && strings.Contains(line, "revision=1")
		})
		d := decide(r, testkit.ShellEvent(fmt.Sprintf("das-push-%d", i), "rm -rf x", testkit.Source("urn:cluster-test")))
		if d.GetPolicyRevision() != 1 || d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
			t.Fatalf("replica %d after the push: revision %d verdict %v, want revision 1 denying rm", i, d.GetPolicyRevision(), d.GetVerdict())
		}
		if n := strings.Count(r.stderr.String(), "NATS unavailable"); n != 1 {
			t.Fatalf("replica %d logged the unavailable start %d times, want once", i, n)
		}
	}
}

// With on_start_unavailable refuse (the default) and NATS not running, the server exits at once
// with an error naming the connection.
func TestClusterRefuseAtStartFailsFast(t *testing.T) {
	t.Parallel()
	nats := natstest.Later(t)
	r := runServer([]string{"-addr", "127.0.0.1:0", "-nats", nats.URL(), "-config", clusterConfig(t, "ra", "")}, nil)
	if r.Code == 0 || !strings.Contains(r.Stderr, "connecting to NATS") {
		t.Fatalf("start with NATS down in refuse mode: exit %d, stderr %q; want an error naming the connection", r.Code, r.Stderr)
	}
}

// metricValue reads one unlabelled metric of r (started with -metrics-addr).
func metricValue(t *testing.T, r replica, name string) float64 {
	t.Helper()
	return metricValueLabelled(t, r, name)
}

// metricValueLabelled reads the metric of r whose exposition line starts with series (a name,
// with its labels in the order Prometheus writes them).
func metricValueLabelled(t *testing.T, r replica, name string) float64 {
	t.Helper()
	line := r.stderr.Wait(t, func(line string) bool { return strings.Contains(line, "metrics listening") })
	_, addr, _ := strings.Cut(line, "addr=")
	resp, err := http.Get("http://" + strings.TrimSpace(addr) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err != nil {
				t.Fatalf("metric %s: %q: %v", name, v, err)
			}
			return f
		}
	}
	t.Fatalf("metrics lack %s", name)
	return 0
}

// A link to NATS that goes silent without a reset (a partition) is found and left. With one
// NATS node there is nowhere to go: found by the client's pings (cluster.ping_interval), the
// replica reports itself not ready and degraded (health, ahp_cluster_degraded) and decides with
// its local stores, until the link carries traffic again. With a cluster, found by the first
// decision whose store operation runs out of its budget (pings set far apart), replica A moves
// to the other node and its decisions are shared again with replica B.
func TestClusterSilentNATSLink(t *testing.T) {
	t.Parallel()
	serving := func(s string) bool { return strings.HasSuffix(s, "SERVING") && !strings.Contains(s, "NOT") }
	decide := func(t *testing.T, r replica, id string) *ahpv1.Decision {
		t.Helper()
		ev := testkit.ShellEvent(id, "ls", testkit.Source("urn:cluster-test"), testkit.Session("silent"))
		resp, err := r.intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Msg.GetDecision()
	}
	t.Run("only-node", func(t *testing.T) {
		t.Parallel()
		proxy := natstest.NewProxy(t, natstest.Start(t))
		r := startReplica(t, proxy.URL(), "ra", "  ping_interval: 200ms\n  connect_timeout: 1s\n", "-cluster-ready-required", "-metrics-addr", "127.0.0.1:0")
		if s := health(t, r); !serving(s) || metricValue(t, r, "ahp_cluster_degraded") != 0 {
			t.Fatalf("before the link went silent: health %q, degraded %v", s, metricValue(t, r, "ahp_cluster_degraded"))
		}
		proxy.Silence()
		r.stderr.Wait(t, func(line string) bool { return strings.Contains(line, "NATS unavailable") })
		if s := health(t, r); serving(s) {
			t.Fatalf("health with the only NATS link silent = %q, want not serving", s)
		}
		if v := metricValue(t, r, "ahp_cluster_degraded"); v != 1 {
			t.Fatalf("ahp_cluster_degraded with the only NATS link silent = %v, want 1", v)
		}
		if d := decide(t, r, "silent-1"); d.GetSynthetic() || d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
			t.Fatalf("decision while degraded: %v synthetic=%v, want the policy's allow", d.GetVerdict(), d.GetSynthetic())
		}
		proxy.Resume()
		r.stderr.Wait(t, func(line string) bool { return strings.Contains(line, "NATS available again") })
		if s := health(t, r); !serving(s) || metricValue(t, r, "ahp_cluster_degraded") != 0 {
			t.Fatalf("after the link returned: health %q, degraded %v", s, metricValue(t, r, "ahp_cluster_degraded"))
		}
		if n := strings.Count(r.stderr.String(), "NATS unavailable"); n != 1 {
			t.Fatalf("the outage was logged %d times, want once", n)
		}
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		nodes := natstest.Cluster(t, 2)
		proxy := natstest.NewProxy(t, nodes[0])
		extra := "  replicas: 2\n  ping_interval: 10m\n"
		a := startReplica(t, proxy.URL(), "ra", extra, "-metrics-addr", "127.0.0.1:0")
		b := startReplica(t, nodes[1].URL(), "rb", extra)
		if first, again := decide(t, a, "before"), decide(t, b, "before"); !again.GetReplayed() || again.GetDecisionId() != first.GetDecisionId() {
			t.Fatal("a decision made before the link went silent is not shared")
		}
		proxy.Silence()
		decide(t, a, "silent") // its claim runs out of the budget: the link is checked
		for _, want := range []string{"NATS link silent", "reconnected to NATS", "NATS available again"} {
			a.stderr.Wait(t, func(line string) bool { return strings.Contains(line, want) })
		}
		for i := range 10 {
			id := fmt.Sprintf("after-%d", i)
			if first, again := decide(t, a, id), decide(t, b, id); !again.GetReplayed() || again.GetDecisionId() != first.GetDecisionId() {
				t.Fatalf("decision %s on A after it moved to the other node is not shared with B", id)
			}
		}
		if v := metricValue(t, a, "ahp_cluster_silent_reconnects_total"); v != 1 {
			t.Fatalf("ahp_cluster_silent_reconnects_total = %v, want 1", v)
		}
	})
}
