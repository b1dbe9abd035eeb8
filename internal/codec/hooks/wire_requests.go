package hooks

import (
	"errors"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// WireRequests reads the hooks/intercept requests of policy test files (policy.WireRequests), in
// either served version, and renders decisions as the bridge does: RenderResult for v0.1,
// RenderDraftResult within the request's offer for the draft.
type WireRequests struct{}

// DecodeRequest decodes one hooks/intercept request and returns its event, its capabilities and
// the renderer of its answer.
func (WireRequests) DecodeRequest(request []byte) (*ahpv1.Event, *ahpv1.Capabilities, func(*ahpv1.Decision) ([]byte, error), error) {
	m, err := Decode(jsonwire.Parse(request))
	if err != nil {
		return nil, nil, nil, err
	}
	if m.Intercept == nil {
		return nil, nil, nil, errors.New("must be a hooks/intercept request")
	}
	p := m.Intercept
	render := func(d *ahpv1.Decision) ([]byte, error) {
		if p.Offer == nil {
			return EncodeResult(m.ID, RenderResult(d, p.ProtocolVersion)), nil
		}
		r, _ := RenderDraftResult(d, p.Offer)
		return EncodeResult(m.ID, r), nil
	}
	return p.Request.GetEvent(), p.Request.GetCapabilities(), render, nil
}
