package service

import (
	"bytes"
	"testing"

	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// connect reuses the buffers it marshals into (and what Marshal returns): a shared encoding must
// reach them as a copy, so that a watcher's buffer being reused cannot change another's bytes.
func TestSharedEncodingIsCopiedNeverAliased(t *testing.T) {
	h := hub.New(4, hub.WithBatchWindow(0))
	defer h.Close()
	sub := h.Subscribe(hub.Filter{}, 4)
	defer sub.Close()
	h.Publish(hub.Item{Event: testkit.ShellEvent("alias", "ls")})
	it := testkit.Receive(t, sub.Items(), "the published item")
	c := shareEncodings(protoCodec{})
	m := sharedWatchResponse(it)
	want, err := protoCodec{}.Marshal(m.WatchResponse)
	if err != nil {
		t.Fatal(err)
	}

	first, err := c.MarshalAppend(make([]byte, 0, 4096), m)
	if err != nil {
		t.Fatal(err)
	}
	marshaled, err := c.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for i := range first {
		first[i] ^= 0xff
	}
	for i := range marshaled {
		marshaled[i] = 0
	}
	prefix := []byte("head")
	again, err := c.MarshalAppend(prefix, m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again[len(prefix):], want) || !bytes.Equal(again[:len(prefix)], []byte("head")) {
		t.Fatalf("after the earlier results were overwritten, MarshalAppend gave %x, want head + %x", again, want)
	}
}
