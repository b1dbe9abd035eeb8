package convert

// ahp/handshake, ahp/query and ahp/batch params and results.

import (
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// DecodeHarnessHandshakeRequest reads ahp/handshake params. Every field is required, including
// agent_info.capabilities ("missing field `capabilities`").
func DecodeHarnessHandshakeRequest(path string, v any) (*ahpv1.HandshakeRequest, error) {
	if err := harnessCheckNumbers(path, v); err != nil {
		return nil, err
	}
	r := &ahpv1.HandshakeRequest{}
	err := harnessStruct(path, v, "HandshakeRequest", []harnessField{
		harnessReqString("protocol_version", &r.ProtocolVersion),
		{name: "agent_info", decode: func(p string, v any) error {
			info := &ahpv1.AgentInfo{}
			r.AgentInfo = info
			return harnessStruct(p, v, "AgentInfo", []harnessField{
				harnessReqString("framework", &info.Framework),
				harnessReqString("version", &info.Version),
				harnessReqStrings("capabilities", &info.Capabilities),
			})
		}},
		harnessReqString("session_id", &r.SessionId),
		harnessReqString("agent_id", &r.AgentId),
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// EncodeHarnessHandshakeRequest writes ahp/handshake params.
func EncodeHarnessHandshakeRequest(r *ahpv1.HandshakeRequest) ([]byte, error) {
	return marshalJSON(map[string]any{
		"protocol_version": r.GetProtocolVersion(),
		"agent_info": map[string]any{
			"framework":    r.GetAgentInfo().GetFramework(),
			"version":      r.GetAgentInfo().GetVersion(),
			"capabilities": harnessStringsJSON(r.GetAgentInfo().GetCapabilities()),
		},
		"session_id": r.GetSessionId(),
		"agent_id":   r.GetAgentId(),
	})
}

// DecodeHarnessHandshakeResponse reads an ahp/handshake result.
func DecodeHarnessHandshakeResponse(path string, v any) (*ahpv1.HandshakeResponse, error) {
	if err := harnessCheckNumbers(path, v); err != nil {
		return nil, err
	}
	r := &ahpv1.HandshakeResponse{}
	err := harnessStruct(path, v, "HandshakeResponse", []harnessField{
		harnessReqString("protocol_version", &r.ProtocolVersion),
		{name: "harness_info", decode: func(p string, v any) error {
			info := &ahpv1.HarnessInfo{}
			r.HarnessInfo = info
			return harnessStruct(p, v, "HarnessInfo", []harnessField{
				harnessReqString("name", &info.Name),
				harnessReqString("version", &info.Version),
				harnessReqStrings("capabilities", &info.Capabilities),
			})
		}},
		harnessOptString("session_token", &r.SessionToken),
		{name: "config", optional: true, decode: func(p string, v any) error {
			if v == nil {
				return nil
			}
			c := &ahpv1.HarnessConfig{}
			r.Config = c
			return harnessStruct(p, v, "HarnessConfig", []harnessField{
				harnessOptUint("timeout_ms", harnessU64, &c.TimeoutMs),
				harnessOptUint("batch_size", harnessUsize, &c.BatchSize),
				{name: "max_depth", optional: true, decode: func(p string, v any) error {
					if v == nil {
						return nil
					}
					d, err := harnessUint(p, v, harnessU32)
					if err == nil {
						c.MaxDepth = new(uint32(d))
					}
					return err
				}},
			})
		}},
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// EncodeHarnessHandshakeResponse writes an ahp/handshake result; session_token, config and each
// config field are left out when unset, as the reference does.
func EncodeHarnessHandshakeResponse(r *ahpv1.HandshakeResponse) ([]byte, error) {
	r = harnessNonNil(r)
	out := map[string]any{
		"protocol_version": r.GetProtocolVersion(),
		"harness_info": map[string]any{
			"name":         r.GetHarnessInfo().GetName(),
			"version":      r.GetHarnessInfo().GetVersion(),
			"capabilities": harnessStringsJSON(r.GetHarnessInfo().GetCapabilities()),
		},
	}
	harnessPutString(out, "session_token", r.SessionToken)
	if c := r.GetConfig(); c != nil {
		cfg := map[string]any{}
		if c.TimeoutMs != nil {
			cfg["timeout_ms"] = harnessU64JSON(c.GetTimeoutMs())
		}
		if c.BatchSize != nil {
			cfg["batch_size"] = harnessU64JSON(c.GetBatchSize())
		}
		if c.MaxDepth != nil {
			cfg["max_depth"] = harnessU64JSON(uint64(c.GetMaxDepth()))
		}
		out["config"] = cfg
	}
	return marshalJSON(out)
}

// DecodeHarnessQueryRequest reads ahp/query params. payload is required; null is a payload.
func DecodeHarnessQueryRequest(path string, v any) (*ahpv1.QueryRequest, error) {
	if err := harnessCheckNumbers(path, v); err != nil {
		return nil, err
	}
	r := &ahpv1.QueryRequest{}
	err := harnessStruct(path, v, "QueryRequest", []harnessField{
		harnessReqString("session_id", &r.SessionId),
		harnessReqString("agent_id", &r.AgentId),
		harnessReqString("query_type", &r.QueryType),
		harnessReqValue("payload", &r.Payload),
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// EncodeHarnessQueryRequest writes ahp/query params; source is not on the Harness wire.
func EncodeHarnessQueryRequest(r *ahpv1.QueryRequest) ([]byte, error) {
	return marshalJSON(map[string]any{
		"session_id": r.GetSessionId(),
		"agent_id":   r.GetAgentId(),
		"query_type": r.GetQueryType(),
		"payload":    harnessValueJSON(r.GetPayload()),
	})
}

// DecodeHarnessQueryResponse reads an ahp/query result. answer is required; null is an answer.
func DecodeHarnessQueryResponse(path string, v any) (*ahpv1.QueryResponse, error) {
	if err := harnessCheckNumbers(path, v); err != nil {
		return nil, err
	}
	r := &ahpv1.QueryResponse{}
	err := harnessStruct(path, v, "QueryResponse", []harnessField{
		harnessReqValue("answer", &r.Answer),
		harnessOptString("reason", &r.Reason),
		harnessOptStrings("alternatives", &r.Alternatives),
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// EncodeHarnessQueryResponse writes an ahp/query result: answer always (null when unset), reason
// and alternatives only when set. The decision field is not on the Harness wire.
func EncodeHarnessQueryResponse(r *ahpv1.QueryResponse) ([]byte, error) {
	r = harnessNonNil(r)
	out := map[string]any{"answer": harnessValueJSON(r.GetAnswer())}
	harnessPutString(out, "reason", r.Reason)
	harnessPutStrings(out, "alternatives", r.GetAlternatives())
	return marshalJSON(out)
}

// ReadHarnessBatch reads ahp/batch params {"events": [...]} ("missing field `events`" without
// it; [] is allowed). Entries are read as ReadHarnessEvent reads them, with paths
// path.events[i]; the first bad entry fails the whole batch with serde's message. A batch carries
// no per-event request id, so every entry gets a synthesized id that includes its index. The
// bridge then applies CheckHarnessBatchSize, and per entry ValidateShape and CheckBatchable.
func ReadHarnessBatch(path string, v any) ([]*HarnessEventParams, error) {
	if err := harnessCheckNumbers(path, v); err != nil {
		return nil, err
	}
	events := []*HarnessEventParams{}
	err := harnessStruct(path, v, "BatchRequest", []harnessField{{name: "events", decode: func(p string, v any) error {
		i := 0
		return harnessSeq(p, v, func(p string, v any) error {
			ev, err := harnessReadEvent(p, v, "", i)
			i++
			events = append(events, ev)
			return err
		})
	}}})
	if err != nil {
		return nil, err
	}
	return events, nil
}

// DecodeHarnessBatch is ReadHarnessBatch returning the canonical events only.
func DecodeHarnessBatch(path string, v any) ([]*ahpv1.Event, error) {
	params, err := ReadHarnessBatch(path, v)
	if err != nil {
		return nil, err
	}
	events := make([]*ahpv1.Event, len(params))
	for i, p := range params {
		events[i] = p.Event
	}
	return events, nil
}

// EncodeHarnessBatch writes ahp/batch params for the events, each as EncodeHarnessEvent does.
func EncodeHarnessBatch(events []*ahpv1.Event) ([]byte, error) {
	list := make([]any, len(events))
	for i, ev := range events {
		obj, err := EncodeHarnessEventValue(ev)
		if err != nil {
			return nil, harnessPrefixPath(indexPath("events", i), err)
		}
		list[i] = obj
	}
	return marshalJSON(map[string]any{"events": list})
}

// CheckHarnessBatchSize rejects a batch longer than cfg.batch_size (unset: no limit): "Batch size
// 101 exceeds configured limit 100" (-32602, no prefix). Exactly batch_size events are allowed.
func CheckHarnessBatchSize(n int, cfg *ahpv1.HarnessConfig) error {
	if cfg == nil || cfg.BatchSize == nil || uint64(n) <= cfg.GetBatchSize() {
		return nil
	}
	return &FieldError{Path: "events", Message: fmt.Sprintf("Batch size %d exceeds configured limit %d", n, cfg.GetBatchSize())}
}

// EncodeHarnessBatchResult writes an ahp/batch result {"decisions": [...]}, in order.
func EncodeHarnessBatchResult(decisions []*ahpv1.HarnessDecision) ([]byte, error) {
	list := make([]any, len(decisions))
	for i, d := range decisions {
		obj, err := harnessDecisionJSON(indexPath("decisions", i), d)
		if err != nil {
			return nil, err
		}
		list[i] = obj
	}
	return marshalJSON(map[string]any{"decisions": list})
}

// DecodeHarnessBatchResult reads an ahp/batch result.
func DecodeHarnessBatchResult(path string, v any) ([]*ahpv1.HarnessDecision, error) {
	if err := harnessCheckNumbers(path, v); err != nil {
		return nil, err
	}
	decisions := []*ahpv1.HarnessDecision{}
	err := harnessStruct(path, v, "BatchResponse", []harnessField{{name: "decisions", decode: func(p string, v any) error {
		return harnessSeq(p, v, func(p string, v any) error {
			d, err := harnessDecodeDecision(p, v)
			decisions = append(decisions, d)
			return err
		})
	}}})
	if err != nil {
		return nil, err
	}
	return decisions, nil
}
