package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/ahp-gateway/ahp/internal/service"
)

// jsonCodec is connect's protojson codec (unknown fields discarded, the same output) with two
// differences: an unknown enum name is refused (connect's codec drops it, so an unknown tool kind
// passed as none), and an unmarshal error says where and what kind of problem, never the value. protojson
// quotes the offending text (`invalid value for uint32 field depth: "ghp_…"`, `duplicate map key
// "password=…"`), and the error reaches the client, its logs and ours.
//
// The hot messages skip protoreflect: the usual InterceptRequest is read by decodeIntercept and
// the Intercept answers are written by appendFast, both held to protojson's result by tests and
// fuzz targets, both leaving anything unusual (and every error) to protojson.
type jsonCodec struct{ name string }

// jsonCodecs replace connect's JSON codecs ("json" and "json; charset=utf-8"), and its binary
// protobuf codec by the same, both wrapped so that Watch encodes each item once per codec for all
// its watchers (service.WatchCodecs).
func jsonCodecs() []connect.HandlerOption {
	return service.WatchCodecs(jsonCodec{"json"}, jsonCodec{"json; charset=utf-8"})
}

func (c jsonCodec) Name() string { return c.name }

func (c jsonCodec) Marshal(m any) ([]byte, error) {
	if b, ok := appendFast(nil, m); ok {
		return b, nil
	}
	pm, ok := m.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("%T is not a proto.Message", m)
	}
	return protojson.MarshalOptions{}.Marshal(pm)
}

// MarshalAppend is Marshal appending to dst (connect's buffer), as connect's codec does. The
// decisions of the Intercept methods are written without protoreflect (codec_encode.go).
func (c jsonCodec) MarshalAppend(dst []byte, m any) ([]byte, error) {
	if b, ok := appendFast(dst, m); ok {
		return b, nil
	}
	pm, ok := m.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("%T is not a proto.Message", m)
	}
	return protojson.MarshalOptions{}.MarshalAppend(dst, pm)
}

// MarshalStable is Marshal, compacted (protojson's whitespace varies), as connect's codec does.
func (c jsonCodec) MarshalStable(m any) ([]byte, error) {
	b, err := c.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func (c jsonCodec) IsBinary() bool { return false }

func (c jsonCodec) Unmarshal(data []byte, m any) error {
	pm, ok := m.(proto.Message)
	if !ok {
		return fmt.Errorf("%T is not a proto.Message", m)
	}
	if len(data) == 0 {
		return errors.New("zero-length payload is not a valid JSON object")
	}
	// The usual shape of the hot request without protoreflect (codec_decode.go); anything else,
	// and every error, is protojson's.
	if req, ok := pm.(*ahpv1.InterceptRequest); ok {
		req.Reset() // as protojson does: the result never keeps what was there before
		if decodeIntercept(data, req) {
			return nil
		}
		proto.Reset(req)
	}
	// Strict first, so that an unknown enum name is refused (as the dialect codecs refuse one)
	// instead of being dropped; only a message with unknown fields is read again leniently,
	// unknown fields being how newer clients talk to older servers.
	err := protojson.Unmarshal(data, pm)
	if err != nil && strings.Contains(err.Error(), "unknown field") {
		proto.Reset(pm)
		err = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(data, pm)
	}
	if err != nil {
		return errors.New(withoutValues(err.Error()))
	}
	return nil
}

// withoutValues cuts the offending value out of a protojson error: what follows its position
// ("proto: (line 1:71): ") is kept up to the first quote or, for the texts that end with the raw
// token ("invalid value 1e…", "unexpected token [", "unexpected token ghp…"), up to the token.
func withoutValues(msg string) string {
	head, rest := "", msg
	if i := strings.Index(msg, "): "); i >= 0 {
		head, rest = msg[:i+3], msg[i+3:]
	}
	if i := strings.IndexByte(rest, '"'); i >= 0 {
		rest = rest[:i]
	}
	for _, p := range []string{"unexpected token", "invalid value for", "invalid value", "unknown field", "duplicate map key", "duplicate field"} {
		if strings.HasPrefix(rest, p) {
			if p == "invalid value for" {
				// "invalid value for uint32 field depth: …": the schema's words only
				if i := strings.Index(rest, " field "); i >= 0 {
					name, _, _ := strings.Cut(rest[i+len(" field "):], ":")
					name, _, _ = strings.Cut(name, " ")
					rest = rest[:i+len(" field ")] + name
				} else {
					rest = p
				}
			} else {
				rest = p
			}
			break
		}
	}
	return strings.TrimRight(head+rest, ": ") + " (value not shown)"
}
