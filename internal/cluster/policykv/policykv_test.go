package policykv_test

import (
	"context"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/cluster/policykv"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/nats-io/nats.go"
)

func connect(t *testing.T, url string) *cluster.Conn {
	t.Helper()
	conn, err := cluster.Connect(cluster.Config{Servers: []string{url}, LookupBudget: 10 * time.Second}, testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return conn
}

// follow runs Follow on conn and returns the policies it applies.
func follow(t *testing.T, conn *cluster.Conn) <-chan *policy.Policy {
	t.Helper()
	ch := make(chan *policy.Policy, 16)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := policykv.Follow(ctx, conn, func(p *policy.Policy) { ch <- p }, true, testkit.Discard()); err != nil {
		t.Fatal(err)
	}
	return ch
}

func push(t *testing.T, conn *cluster.Conn, name string) {
	t.Helper()
	if _, err := policykv.Push(context.Background(), conn, []byte(testkit.PolicyYAML(name, "")), name+".yaml"); err != nil {
		t.Fatal(err)
	}
}

func TestFollowAppliesEachPushOnce(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	conn := connect(t, srv.URL())
	push(t, conn, "first")
	got := follow(t, conn)
	if p := testkit.Receive(t, got, "the policy pushed before Follow was not applied"); p.Name() != "first" || p.Revision() != 1 {
		t.Fatalf("applied %q revision %d, want first at revision 1", p.Name(), p.Revision())
	}
	push(t, conn, "second")
	if p := testkit.Receive(t, got, "the second push was not applied"); p.Name() != "second" || p.Revision() != 2 {
		t.Fatalf("applied %q revision %d, want second at revision 2", p.Name(), p.Revision())
	}
	select {
	case p := <-got:
		t.Fatalf("applied %q revision %d again", p.Name(), p.Revision())
	default:
	}
}

func TestWatcherResumesAfterNATSRestart(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	conn := connect(t, srv.URL())
	pusher := connect(t, srv.URL())
	got := follow(t, conn)
	push(t, pusher, "before")
	testkit.Receive(t, got, "the push before the restart was not applied")
	back := conn.NATS().StatusChanged(nats.CONNECTED)
	backPusher := pusher.NATS().StatusChanged(nats.CONNECTED)
	srv.Stop()
	srv.Restart()
	testkit.Receive(t, back, "the follower did not reconnect")
	testkit.Receive(t, backPusher, "the pusher did not reconnect")
	natstest.WaitJetStream(t, srv.URL())
	push(t, pusher, "after")
	if p := testkit.Receive(t, got, "the push after a NATS restart was not applied"); p.Name() != "after" || p.Revision() != 2 {
		t.Fatalf("applied %q revision %d, want after at revision 2", p.Name(), p.Revision())
	}
}
