package hub_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"google.golang.org/protobuf/proto"
)

func receive(t *testing.T, s *hub.Subscription) hub.Item {
	t.Helper()
	return testkit.Receive(t, s.Items(), "no item delivered")
}

func TestFilters(t *testing.T) {
	t.Parallel()
	before := testkit.ShellEvent("e", "ls", testkit.Session("s1"))
	after := testkit.Event("e", ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, testkit.Session("s2"), testkit.Tool("Read", ahpv1.ToolKind_TOOL_KIND_FILE_READ))
	decided := hub.Item{Event: before, Decision: &ahpv1.Decision{DecisionId: "d"}}
	observed := hub.Item{Event: after}
	cases := []struct {
		name          string
		filter        hub.Filter
		decided, obsd bool
	}{
		{"everything", hub.Filter{}, true, true},
		{"session", hub.Filter{SessionID: "s2"}, false, true},
		{"event type", hub.Filter{EventTypes: []ahpv1.EventType{ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE}}, true, false},
		{"tool kind", hub.Filter{ToolKinds: []ahpv1.ToolKind{ahpv1.ToolKind_TOOL_KIND_FILE_READ}}, false, true},
		{"decisions only", hub.Filter{DecisionsOnly: true}, true, false},
	}
	for _, tc := range cases {
		if got := tc.filter.Match(decided); got != tc.decided {
			t.Errorf("%s: Match(decision) = %v, want %v", tc.name, got, tc.decided)
		}
		if got := tc.filter.Match(observed); got != tc.obsd {
			t.Errorf("%s: Match(observation) = %v, want %v", tc.name, got, tc.obsd)
		}
	}
}

func TestDeliversInOrder(t *testing.T) {
	t.Parallel()
	h := hub.New(64)
	defer h.Close()
	s := h.Subscribe(hub.Filter{}, 16)
	defer s.Close()
	for i := range 10 {
		h.Publish(hub.Item{Event: testkit.Event(string(rune('a'+i)), ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, testkit.Session("s"))})
	}
	for i := range 10 {
		if got, want := receive(t, s).Event.GetId(), string(rune('a'+i)); got != want {
			t.Fatalf("item %d = %q, want %q", i, got, want)
		}
	}
}

func TestSlowSubscriberIsCutOff(t *testing.T) {
	t.Parallel()
	h := hub.New(1024)
	defer h.Close()
	slow := h.Subscribe(hub.Filter{}, 2)
	fast := h.Subscribe(hub.Filter{}, 1024)
	defer fast.Close()
	for range 10 {
		h.Publish(hub.Item{Event: testkit.Event("e", ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, testkit.Session("s"))})
	}
	wantCutOff(t, slow)
	for range 10 { // the fast one still gets everything
		receive(t, fast)
	}
	if got := h.Stats().CutOff; got != 1 {
		t.Errorf("CutOff = %d, want 1", got)
	}
}

func TestCloseEndsSubscriptions(t *testing.T) {
	t.Parallel()
	h := hub.New(4)
	s := h.Subscribe(hub.Filter{}, 4)
	h.Close()
	<-s.Ended()
	if !errors.Is(s.Err(), hub.ErrClosed) {
		t.Fatalf("Err = %v, want ErrClosed", s.Err())
	}
	late := h.Subscribe(hub.Filter{}, 4)
	<-late.Ended()
	if h.Stats().Subscribers != 0 {
		t.Fatal("subscribers left after Close")
	}
}

func BenchmarkPublishNoSubscribers(b *testing.B) {
	h := hub.New(1024)
	defer h.Close()
	it := hub.Item{Event: testkit.Event("e", ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, testkit.Session("s"))}
	for b.Loop() {
		h.Publish(it)
	}
}

func TestTransformRunsBeforeWatchersSeeItems(t *testing.T) {
	t.Parallel()
	h := hub.New(8, hub.WithTransform(func(it hub.Item) hub.Item {
		ev := &ahpv1.Event{Id: "[REDACTED]", Type: it.Event.GetType()}
		return hub.Item{Event: ev, Decision: it.Decision, Time: it.Time}
	}))
	defer h.Close()
	s := h.Subscribe(hub.Filter{}, 4)
	defer s.Close()
	orig := testkit.Event("secret", ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, testkit.Session("s"))
	h.Publish(hub.Item{Event: orig})
	if got := receive(t, s).Event.GetId(); got != "[REDACTED]" {
		t.Fatalf("watcher saw %q", got)
	}
	if orig.GetId() != "secret" {
		t.Fatal("the publisher's event was changed")
	}
}

// gatedHub returns a hub whose dispatcher blocks in the transform of the first item until release
// is closed; entered is closed once it blocks. Whatever is published meanwhile queues up, which
// makes the batches that follow deterministic.
func gatedHub(t *testing.T, queueSize int, opts ...hub.Option) (h *hub.Hub, entered, release chan struct{}) {
	t.Helper()
	entered, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	h = hub.New(queueSize, append(opts, hub.WithTransform(func(it hub.Item) hub.Item {
		once.Do(func() {
			close(entered)
			<-release
		})
		return it
	}))...)
	t.Cleanup(h.Close)
	return h, entered, release
}

func numbered(session string, i int) hub.Item {
	return hub.Item{Event: testkit.Event(strconv.Itoa(i), ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, testkit.Session(session))}
}

// drain returns the items buffered now, without waiting.
func drain(s *hub.Subscription) []hub.Item {
	var items []hub.Item
	for {
		select {
		case it := <-s.Items():
			items = append(items, it)
		default:
			return items
		}
	}
}

// wantCutOff waits until s ends and fails unless it ended as a slow subscriber.
func wantCutOff(t *testing.T, s *hub.Subscription) {
	t.Helper()
	testkit.Receive(t, s.Ended(), "slow subscriber was not cut off")
	if !errors.Is(s.Err(), hub.ErrSlowSubscriber) {
		t.Fatalf("Err = %v, want ErrSlowSubscriber", s.Err())
	}
}

// receiveN waits for the next n items of s.
func receiveN(t *testing.T, s *hub.Subscription, n int) []hub.Item {
	t.Helper()
	items := make([]hub.Item, n)
	for i := range items {
		items[i] = receive(t, s)
	}
	return items
}

// finalStats closes h, which waits for its dispatcher to end, and returns the counters then: no
// delivery is in progress that has yet to be counted.
func finalStats(h *hub.Hub) hub.Stats {
	h.Close()
	return h.Stats()
}

// ids returns the event ids of items.
func ids(items []hub.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Event.GetId()
	}
	return out
}

func wantIDs(t *testing.T, who string, items []hub.Item, want ...int) {
	t.Helper()
	got := ids(items)
	if len(got) != len(want) {
		t.Fatalf("%s got %d items %v, want %d", who, len(got), got, len(want))
	}
	for i, w := range want {
		if got[i] != strconv.Itoa(w) {
			t.Fatalf("%s item %d = %s, want %d (all: %v)", who, i, got[i], w, got)
		}
	}
}

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

func TestQueuedItemsAreOneBatchInOrderWithOneWakeUp(t *testing.T) {
	t.Parallel()
	h, entered, release := gatedHub(t, 1024)
	s := h.Subscribe(hub.Filter{}, 1024)
	defer s.Close()
	h.Publish(numbered("s", 0))
	<-entered // the dispatcher is delivering item 0
	for i := 1; i <= 100; i++ {
		h.Publish(numbered("s", i))
	}
	close(release)
	// Every item arrived, so the second batch is being delivered; finalStats waits for its end.
	wantIDs(t, "subscriber", receiveN(t, s, 101), seq(0, 101)...)
	st := finalStats(h)
	if st.Batches != 2 {
		t.Fatalf("Batches = %d, want 2 (item 0, then the hundred queued behind it)", st.Batches)
	}
	if st.Published != 101 {
		t.Fatalf("Published = %d, want 101", st.Published)
	}
	select {
	case <-s.Ready():
	default:
		t.Fatal("Ready did not fire after delivery")
	}
	select {
	case <-s.Ready():
		t.Fatal("the two batches woke the subscriber twice although it had not taken the first yet")
	default:
	}
	if got := drain(s); len(got) != 0 {
		t.Fatalf("drain after draining returned %v", ids(got))
	}
}

func TestBatchesAreBounded(t *testing.T) {
	t.Parallel()
	const n = 2*hub.MaxBatch + 10
	h, entered, release := gatedHub(t, 4096)
	s := h.Subscribe(hub.Filter{}, 4096)
	defer s.Close()
	h.Publish(numbered("s", 0))
	<-entered
	for i := 1; i <= n; i++ {
		h.Publish(numbered("s", i))
	}
	close(release)
	// item 0 alone, then full batches, then the rest.
	want := uint64(1 + (n+hub.MaxBatch-1)/hub.MaxBatch)
	var got []hub.Item
	for len(got) < n+1 {
		testkit.Receive(t, s.Ready(), fmt.Sprintf("received %d of %d items", len(got), n+1))
		got = append(got, drain(s)...)
	}
	wantIDs(t, "subscriber", got, seq(0, n+1)...)
	if b := finalStats(h).Batches; b != want {
		t.Fatalf("Batches = %d, want %d (batches of at most %d)", b, want, hub.MaxBatch)
	}
}

func TestCutOffInsideABatchDropsWhatWasBuffered(t *testing.T) {
	t.Parallel()
	h, entered, release := gatedHub(t, 1024)
	slow := h.Subscribe(hub.Filter{}, 2)
	fast := h.Subscribe(hub.Filter{}, 1024)
	defer fast.Close()
	only := h.Subscribe(hub.Filter{SessionID: "odd"}, 1024)
	defer only.Close()
	h.Publish(numbered("even", 0))
	<-entered
	for i := 1; i < 10; i++ {
		session := "even"
		if i%2 == 1 {
			session = "odd"
		}
		h.Publish(numbered(session, i))
	}
	close(release)
	wantCutOff(t, slow)
	// What fitted is dropped with the subscription: a watcher that stopped reading pins nothing.
	wantIDs(t, "slow subscriber", drain(slow))
	wantIDs(t, "fast subscriber", receiveN(t, fast, 10), seq(0, 10)...)
	wantIDs(t, "filtered subscriber", receiveN(t, only, 5), 1, 3, 5, 7, 9)
	st := h.Stats()
	if st.CutOff != 1 {
		t.Errorf("CutOff = %d, want 1", st.CutOff)
	}
	if st.Subscribers != 2 {
		t.Errorf("Subscribers = %d, want 2 left", st.Subscribers)
	}
	if b := finalStats(h).Batches; b != 2 {
		t.Errorf("Batches = %d, want 2 (item 0, then the nine queued behind it)", b)
	}
}

func TestWindowDelaysDeliveryButNotForever(t *testing.T) {
	t.Parallel()
	h := hub.New(64) // the default window
	defer h.Close()
	s := h.Subscribe(hub.Filter{}, 64)
	defer s.Close()
	// One item at a time: each must arrive without a later item pushing it out. The bound is
	// generous (the window is a millisecond) so that a loaded machine does not fail the test.
	for i := range 20 {
		published := time.Now()
		h.Publish(numbered("s", i))
		testkit.Receive(t, s.Ready(), fmt.Sprintf("item %d not delivered", i))
		wantIDs(t, "subscriber", drain(s), i)
		if d := time.Since(published); d > 2*time.Second {
			t.Fatalf("item %d took %v, window %v", i, d, hub.DefaultBatchWindow)
		}
	}
	// A batch is counted after the wake-up; finalStats waits for the last count.
	st := finalStats(h)
	if st.Batches != 20 {
		t.Errorf("Batches = %d, want 20 (one per item)", st.Batches)
	}
	if st.Published != 20 {
		t.Errorf("Published = %d, want 20", st.Published)
	}
}

func TestWithoutWindowDeliversInOrder(t *testing.T) {
	t.Parallel()
	h := hub.New(256, hub.WithBatchWindow(0))
	defer h.Close()
	s := h.Subscribe(hub.Filter{}, 256)
	defer s.Close()
	for i := range 200 {
		h.Publish(numbered("s", i))
	}
	var got []hub.Item
	for len(got) < 200 {
		got = append(got, receive(t, s))
	}
	wantIDs(t, "subscriber", got, seq(0, 200)...)
}

func TestCloseDeliversWhatWasPublishedFirst(t *testing.T) {
	t.Parallel()
	h := hub.New(64, hub.WithBatchWindow(time.Hour))
	s := h.Subscribe(hub.Filter{}, 64)
	for i := range 5 {
		h.Publish(numbered("s", i))
	}
	select {
	case <-s.Ready():
		t.Fatal("delivered before the window ended")
	default:
	}
	h.Close() // must not wait for the window
	<-s.Ended()
	if !errors.Is(s.Err(), hub.ErrClosed) {
		t.Fatalf("Err = %v, want ErrClosed", s.Err())
	}
	wantIDs(t, "subscriber", drain(s), seq(0, 5)...)
	if st := h.Stats(); st.Subscribers != 0 {
		t.Fatalf("stats after Close = %+v", st)
	}
}

type testKey struct{ name string }

func TestSharedIsBuiltOncePerItem(t *testing.T) {
	t.Parallel()
	var transforms atomic.Int32
	h := hub.New(16, hub.WithTransform(func(it hub.Item) hub.Item {
		transforms.Add(1)
		return it
	}))
	defer h.Close()
	subs := make([]*hub.Subscription, 3)
	for i := range subs {
		subs[i] = h.Subscribe(hub.Filter{}, 16)
		defer subs[i].Close()
	}
	h.Publish(numbered("s", 0))
	h.Publish(numbered("s", 1))

	var builds atomic.Int32
	build := func(it hub.Item) any {
		builds.Add(1)
		return &ahpv1.WatchResponse{Event: it.Event}
	}
	got := make([][2]any, len(subs))
	var wg sync.WaitGroup
	for i, s := range subs {
		wg.Go(func() {
			for j := range 2 {
				it := <-s.Items()
				got[i][j] = it.Shared(testKey{"response"}, build)
			}
		})
	}
	wg.Wait()
	if builds.Load() != 2 {
		t.Fatalf("%d builds for 2 items and 3 subscribers, want 2", builds.Load())
	}
	if transforms.Load() != 2 {
		t.Fatalf("%d transforms for 2 items and 3 subscribers, want 2", transforms.Load())
	}
	for i := range subs {
		for j := range 2 {
			if got[i][j] != got[0][j] {
				t.Fatalf("subscriber %d got another value for item %d", i, j)
			}
		}
	}
	if got[0][0] == got[0][1] {
		t.Fatal("two items share one value")
	}
	if got[0][0].(*ahpv1.WatchResponse).GetEvent().GetId() != "0" {
		t.Fatal("value built from the wrong item")
	}

	// Another key is another value; an item that did not come through a hub shares nothing.
	h.Publish(numbered("s", 2))
	it := <-subs[0].Items()
	a, b := it.Shared(testKey{"a"}, build), it.Shared(testKey{"b"}, build)
	if a == b {
		t.Fatal("keys are not told apart: two keys share one value")
	}
	if it.Shared(testKey{"a"}, build) != a {
		t.Fatal("a key's value was built again")
	}
	loose := numbered("s", 3)
	if loose.Shared(testKey{"a"}, build) == loose.Shared(testKey{"a"}, build) {
		t.Fatal("an item not from a hub shared a value")
	}
}

func TestCutOffSubscriptionHoldsNoItems(t *testing.T) {
	t.Parallel()
	h := hub.New(64)
	defer h.Close()
	slow := h.Subscribe(hub.Filter{}, 4)
	for i := range 10 {
		h.Publish(numbered("s", i))
	}
	wantCutOff(t, slow)
	if n := len(slow.Items()); n != 0 {
		t.Fatalf("a cut-off subscription still holds %d items", n)
	}
}

// size is the estimate the hub makes of an item's bytes.
func size(it hub.Item) int { return proto.Size(it.Event) + proto.Size(it.Decision) }

func TestByteBoundCutsOffBeforeTheCountBound(t *testing.T) {
	t.Parallel()
	one := size(numbered("s", 0)) // every item below has the same size
	h, entered, release := gatedHub(t, 64, hub.WithBufferBytes(3*one))
	slow := h.Subscribe(hub.Filter{}, 64)
	h.Publish(numbered("s", 0))
	<-entered
	for i := 1; i < 10; i++ {
		h.Publish(numbered("s", i))
	}
	close(release)
	wantCutOff(t, slow)
	if st := h.Stats(); st.CutOff != 1 || st.Subscribers != 0 {
		t.Fatalf("stats = %+v, want one cut-off and no subscribers", st)
	}
}

func TestByteBoundCountsOnlyWhatIsStillBuffered(t *testing.T) {
	t.Parallel()
	big := hub.Item{Event: testkit.ShellEvent("big", strings.Repeat("x", 4096), testkit.Session("s"))}
	// Room for one item at a time: a reader that keeps up is never cut off, and an item larger
	// than the limit still reaches a subscriber with an empty buffer.
	h := hub.New(64, hub.WithBufferBytes(size(numbered("s", 0))))
	defer h.Close()
	s := h.Subscribe(hub.Filter{}, 64)
	defer s.Close()
	for i := range 20 {
		h.Publish(numbered("s", i))
		wantIDs(t, "subscriber", receiveN(t, s, 1), i)
	}
	h.Publish(big)
	if got := receive(t, s).Event.GetId(); got != "big" {
		t.Fatalf("got %q, want the item larger than the limit", got)
	}
	if err := s.Err(); err != nil {
		t.Fatalf("a reader that kept up was ended: %v", err)
	}
}

// filling reports whether s's Filling has a token, and takes it.
func filling(s *hub.Subscription) bool {
	select {
	case <-s.Filling():
		return true
	default:
		return false
	}
}

func TestFillingFiresWhenTheBufferIsHalfFullInItems(t *testing.T) {
	t.Parallel()
	h := hub.New(64)
	defer h.Close()
	s := h.Subscribe(hub.Filter{}, 10)
	defer s.Close()
	for i := range 5 {
		h.Publish(numbered("s", i))
		// Filling is set before Ready, so after Ready it says what this delivery found.
		testkit.Receive(t, s.Ready(), fmt.Sprintf("no wake-up for item %d", i))
		if got, want := filling(s), i == 4; got != want {
			t.Fatalf("after %d of 10 items buffered: Filling %v, want %v", i+1, got, want)
		}
	}
	// Reading makes room: the next item leaves the buffer below half.
	wantIDs(t, "subscriber", drain(s), seq(0, 5)...)
	h.Publish(numbered("s", 5))
	testkit.Receive(t, s.Ready(), "no wake-up for item 5")
	if filling(s) {
		t.Fatal("Filling fired for one buffered item of 10")
	}
}

func TestFillingFiresWhenTheBufferIsHalfFullInBytes(t *testing.T) {
	t.Parallel()
	one := size(numbered("s", 0))
	h := hub.New(64, hub.WithBufferBytes(4*one))
	defer h.Close()
	s := h.Subscribe(hub.Filter{}, 64)
	defer s.Close()
	for i := range 2 {
		h.Publish(numbered("s", i))
		testkit.Receive(t, s.Ready(), fmt.Sprintf("no wake-up for item %d", i))
		if got, want := filling(s), i == 1; got != want {
			t.Fatalf("after %d items of a 4-item byte limit: Filling %v, want %v", i+1, got, want)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("subscription ended: %v", err)
	}
}

// OnSubscribers hears of every Subscribe before it returns, and of the last subscriber going,
// however it goes: closed, cut off by the dispatcher, or ended by Close.
func TestOnSubscribersHearsArrivalsAndTheLastDeparture(t *testing.T) {
	t.Parallel()
	h := hub.New(64, hub.WithBatchWindow(0))
	calls := make(chan int, 16)
	h.OnSubscribers(func(n int) { calls <- n })
	expect := func(want int) {
		t.Helper()
		if got := testkit.Receive(t, calls, "no OnSubscribers call"); got != want {
			t.Fatalf("OnSubscribers(%d), want %d", got, want)
		}
	}
	noCall := func(what string) {
		t.Helper()
		select {
		case n := <-calls:
			t.Fatalf("%s: OnSubscribers(%d), want no call", what, n)
		default:
		}
	}
	a := h.Subscribe(hub.Filter{}, 4)
	// Subscribe has returned: its call was made, on this goroutine, before it returned.
	noWait := func(want int) {
		t.Helper()
		select {
		case n := <-calls:
			if n != want {
				t.Fatalf("OnSubscribers(%d), want %d", n, want)
			}
		default:
			t.Fatalf("Subscribe returned before OnSubscribers(%d) was called", want)
		}
	}
	noWait(1)
	b := h.Subscribe(hub.Filter{}, 4)
	noWait(2)
	if h.Subscribers() != 2 {
		t.Fatalf("Subscribers() = %d, want 2", h.Subscribers())
	}
	a.Close()
	noCall("one of two closed")
	b.Close()
	expect(0)
	b.Close()
	noCall("closed twice")

	// A cut-off of the last subscriber, by the dispatcher.
	slow := h.Subscribe(hub.Filter{}, 1)
	noWait(1)
	for range 4 {
		h.Publish(hub.Item{Event: testkit.ShellEvent("e", "ls")})
	}
	wantCutOff(t, slow)
	expect(0)

	// Close ends the last one.
	h.Subscribe(hub.Filter{}, 4)
	noWait(1)
	h.OnSubscribers(nil)
	h.OnSubscribers(func(n int) { calls <- n })
	h.Close()
	expect(0)
	h.Subscribe(hub.Filter{}, 4) // after Close: ended at once, no subscriber, no call
	noCall("subscribed after Close")
}
