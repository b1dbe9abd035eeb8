package service_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/service"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/typed"
)

// countingCodec is a protobuf or JSON codec that counts how many WatchResponses it encoded.
type countingCodec struct {
	name    string
	json    bool
	encodes *atomic.Int64
}

func (c countingCodec) Name() string { return c.name }

func (c countingCodec) Marshal(m any) ([]byte, error) {
	if _, ok := m.(*ahpv1.WatchResponse); ok {
		c.encodes.Add(1)
	}
	if c.json {
		return protojson.Marshal(m.(proto.Message))
	}
	return proto.Marshal(m.(proto.Message))
}

func (c countingCodec) Unmarshal(b []byte, m any) error {
	if c.json {
		return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(b, m.(proto.Message))
	}
	return proto.Unmarshal(b, m.(proto.Message))
}

// watchServer serves the services with a hub on loopback, with opts for the handlers.
func watchServer(t *testing.T, opts ...connect.HandlerOption) *httptest.Server {
	t.Helper()
	h := hub.New(1024)
	t.Cleanup(h.Close)
	p := policy.Default()
	c := core.New(core.Config{Policy: func() core.Policy { return p }, Typed: typed.Decide, Logger: testkit.Discard(), Hub: h})
	s, err := service.New(c, service.Options{Logger: testkit.Discard(), Watcher: h})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(mux, opts...)
	ts := httptest.NewUnstartedServer(mux)
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return ts
}

// watchAll opens json JSON and binary protobuf watchers, each subscribed when it returns, makes
// decisions decisions and checks that every watcher receives every one of them, in order.
func watchAll(t *testing.T, ts *httptest.Server, json, binary, decisions int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	type watcher struct {
		name   string
		stream *connect.ServerStreamForClient[ahpv1.WatchResponse]
	}
	var watchers []watcher
	for i := range json + binary {
		var opts []connect.ClientOption
		name := fmt.Sprintf("protobuf watcher %d", i)
		if i < json {
			opts, name = append(opts, connect.WithProtoJSON()), fmt.Sprintf("JSON watcher %d", i)
		}
		stream, err := ahpv1connect.NewObservationServiceClient(ts.Client(), ts.URL, opts...).Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		defer stream.Close()
		// Watch sends its headers once it is subscribed.
		_ = stream.ResponseHeader()
		watchers = append(watchers, watcher{name, stream})
	}
	intercept := ahpv1connect.NewInterceptServiceClient(ts.Client(), ts.URL)
	var want []string
	for i := range decisions {
		resp, err := intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent(fmt.Sprintf("enc-%02d", i), "ls")}))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, resp.Msg.GetDecision().GetDecisionId())
	}
	for _, w := range watchers {
		for i, id := range want {
			if !w.stream.Receive() {
				t.Fatalf("%s: ended after %d of %d decisions: %v", w.name, i, decisions, w.stream.Err())
			}
			msg := w.stream.Msg()
			if msg.GetEvent().GetId() != fmt.Sprintf("enc-%02d", i) || msg.GetDecision().GetDecisionId() != id || msg.GetTime() == "" {
				t.Fatalf("%s: item %d = event %s, decision %s, time %q; want event enc-%02d, decision %s and a time", w.name, i, msg.GetEvent().GetId(), msg.GetDecision().GetDecisionId(), msg.GetTime(), i, id)
			}
		}
	}
}

// Watchers of one codec share one encoding of each item: however many there are, the codec
// encodes each item once.
func TestWatchEncodesEachItemOncePerCodec(t *testing.T) {
	t.Parallel()
	var jsonEncodes, protoEncodes atomic.Int64
	ts := watchServer(t, service.WatchCodecs(
		countingCodec{name: "json", json: true, encodes: &jsonEncodes},
		countingCodec{name: "proto", encodes: &protoEncodes},
	)...)
	const jsonWatchers, protoWatchers, decisions = 6, 3, 20
	watchAll(t, ts, jsonWatchers, protoWatchers, decisions)
	if got := jsonEncodes.Load(); got != decisions {
		t.Errorf("%d JSON watchers: %d JSON encodings of %d items, want one per item", jsonWatchers, got, decisions)
	}
	if got := protoEncodes.Load(); got != decisions {
		t.Errorf("%d protobuf watchers: %d protobuf encodings of %d items, want one per item", protoWatchers, got, decisions)
	}
}

// With connect's own codecs (no WatchCodecs) Watch sends the same items, encoding them per
// watcher.
func TestWatchWorksWithConnectsCodecs(t *testing.T) {
	t.Parallel()
	watchAll(t, watchServer(t), 3, 3, 10)
}

// The binary protobuf codec of WatchCodecs is connect's: other messages pass through it whole.
func TestWatchCodecsCarryOtherCalls(t *testing.T) {
	t.Parallel()
	var encodes atomic.Int64
	ts := watchServer(t, service.WatchCodecs(countingCodec{name: "json", json: true, encodes: &encodes})...)
	for _, opts := range [][]connect.ClientOption{nil, {connect.WithProtoJSON()}} {
		resp, err := ahpv1connect.NewInterceptServiceClient(ts.Client(), ts.URL, opts...).Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent("other", "ls")}))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Msg.GetDecision().GetDecisionId() == "" {
			t.Fatalf("answer without a decision: %v", resp.Msg)
		}
	}
}
