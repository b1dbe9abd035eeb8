package service

import (
	"errors"
	"fmt"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/hub"
	"google.golang.org/protobuf/proto"
)

// connect-go marshals every message a stream sends, so a hub item sent to ten watchers was
// encoded ten times, although its response is one shared value (sharedWatchResponse). Watch sends
// an encodedWatchResponse instead; a codec made by WatchCodecs recognises it and appends the
// bytes the item's first watcher of that codec encoded, shared through the hub item (Item.Shared)
// by every watcher of the same codec. Any other codec marshals it as the WatchResponse it embeds,
// so Watch works with connect's own codecs too, only without the sharing.

// encodedWatchResponse is the response for one hub item; Watch sends it through the stream's
// connection. It is a proto.Message (the embedded response's methods), so interceptors and codecs
// that do not know it treat it as the WatchResponse.
type encodedWatchResponse struct {
	*ahpv1.WatchResponse
	item hub.Item
}

// encodedBytes is one codec's encoding of an item's response, or why it could not be made. Its
// bytes are shared by every watcher of the codec and must never be modified or handed to anything
// that may reuse them (connect recycles what Marshal returns: see sharingCodec.Marshal).
type encodedBytes struct {
	b   []byte
	err error
}

// sharingCodec wraps a codec: an encodedWatchResponse is encoded once per item and codec, any
// other message is the inner codec's.
type sharingCodec struct {
	connect.Codec
	// key tells this codec's encodings apart from other codecs' in an item's shared values.
	key *codecKey
}

type codecKey struct{ name string }

// WatchCodecs returns handler options that register binary protobuf (connect's) and each of
// codecs (a server's JSON codecs; one named "proto" replaces connect's), all wrapped for Watch:
// each item a Watch stream sends is encoded once per codec, however many watchers use it, and the
// same bytes are written to every one of them. Other messages are the wrapped codecs' own.
func WatchCodecs(codecs ...connect.Codec) []connect.HandlerOption {
	opts := []connect.HandlerOption{connect.WithCodec(shareEncodings(protoCodec{}))}
	for _, c := range codecs {
		opts = append(opts, connect.WithCodec(shareEncodings(c)))
	}
	return opts
}

func shareEncodings(c connect.Codec) sharingCodec {
	return sharingCodec{Codec: c, key: &codecKey{c.Name()}}
}

// encoded returns m's shared encoding, made by the first caller for its item.
func (c sharingCodec) encoded(m *encodedWatchResponse) ([]byte, error) {
	e := m.item.Shared(c.key, func(hub.Item) any {
		b, err := c.Codec.Marshal(m.WatchResponse)
		return &encodedBytes{b: b, err: err}
	}).(*encodedBytes)
	return e.b, e.err
}

// Marshal implements connect.Codec. connect puts what Marshal returns into its buffer pool, so a
// shared encoding is returned as a copy (connect calls MarshalAppend instead when it can).
func (c sharingCodec) Marshal(m any) ([]byte, error) {
	if em, ok := m.(*encodedWatchResponse); ok {
		b, err := c.encoded(em)
		if err != nil {
			return nil, err
		}
		return append([]byte(nil), b...), nil
	}
	return c.Codec.Marshal(m)
}

// MarshalAppend appends m's encoding to dst, which connect takes from its buffer pool: a shared
// encoding is copied into it, never aliased.
func (c sharingCodec) MarshalAppend(dst []byte, m any) ([]byte, error) {
	if em, ok := m.(*encodedWatchResponse); ok {
		b, err := c.encoded(em)
		if err != nil {
			return nil, err
		}
		return append(dst, b...), nil
	}
	if a, ok := c.Codec.(interface {
		MarshalAppend([]byte, any) ([]byte, error)
	}); ok {
		return a.MarshalAppend(dst, m)
	}
	b, err := c.Codec.Marshal(m)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// protoCodec is connect's binary protobuf codec (which connect does not export).
type protoCodec struct{}

func (protoCodec) Name() string { return "proto" }

func (protoCodec) Marshal(m any) ([]byte, error) {
	pm, err := asProto(m)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(pm)
}

func (protoCodec) MarshalAppend(dst []byte, m any) ([]byte, error) {
	pm, err := asProto(m)
	if err != nil {
		return nil, err
	}
	return proto.MarshalOptions{}.MarshalAppend(dst, pm)
}

func (protoCodec) Unmarshal(data []byte, m any) error {
	pm, err := asProto(m)
	if err != nil {
		return err
	}
	if err := proto.Unmarshal(data, pm); err != nil {
		return fmt.Errorf("unmarshal into %T: %w", m, err)
	}
	return nil
}

func asProto(m any) (proto.Message, error) {
	pm, ok := m.(proto.Message)
	if !ok {
		return nil, errors.New("message is not a protobuf message")
	}
	return pm, nil
}
