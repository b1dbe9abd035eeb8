package harness

// ahp/handshake, ahp/query and ahp/batch params and results.

import (
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/limits"
)

// decodeHandshakeRequest reads ahp/handshake params. Every field is required, including
// agent_info.capabilities ("missing field `capabilities`").
func decodeHandshakeRequest(path string, v any) (*ahpv1.HandshakeRequest, error) {
	r := &ahpv1.HandshakeRequest{}
	return readParams(r, path, v, "HandshakeRequest", []structField{
		reqString("protocol_version", &r.ProtocolVersion),
		req("agent_info", &r.AgentInfo, decodeAgentInfo),
		reqBounded("session_id", limits.ID, &r.SessionId),
		reqBounded("agent_id", limits.ID, &r.AgentId),
	})
}

// DecodeHandshakeResponse reads an ahp/handshake result.
func DecodeHandshakeResponse(path string, v any) (*ahpv1.HandshakeResponse, error) {
	r := &ahpv1.HandshakeResponse{}
	return readParams(r, path, v, "HandshakeResponse", []structField{
		reqString("protocol_version", &r.ProtocolVersion),
		req("harness_info", &r.HarnessInfo, decodeHarnessInfo),
		optString("session_token", &r.SessionToken),
		opt("config", &r.Config, decodeHarnessConfig),
	})
}

func decodeHarnessConfig(path string, v any) (*ahpv1.HarnessConfig, error) {
	c := &ahpv1.HarnessConfig{}
	return readInto(c, path, v, "HarnessConfig", []structField{
		optUint("timeout_ms", u64Type, &c.TimeoutMs),
		optUint("batch_size", usizeType, &c.BatchSize),
		{name: "max_depth", optional: true, decode: func(p string, v any) error {
			if v == nil {
				return nil
			}
			d, err := readUint(p, v, u32Type)
			if err == nil {
				c.MaxDepth = new(uint32(d))
			}
			return err
		}},
	})
}

// decodeAgentInfo and decodeHarnessInfo read the two sides' self-descriptions in a handshake.
func decodeAgentInfo(path string, v any) (*ahpv1.AgentInfo, error) {
	info := &ahpv1.AgentInfo{}
	return readInto(info, path, v, "AgentInfo", []structField{
		reqString("framework", &info.Framework),
		reqString("version", &info.Version),
		reqStrings("capabilities", &info.Capabilities),
	})
}

func decodeHarnessInfo(path string, v any) (*ahpv1.HarnessInfo, error) {
	info := &ahpv1.HarnessInfo{}
	return readInto(info, path, v, "HarnessInfo", []structField{
		reqString("name", &info.Name),
		reqString("version", &info.Version),
		reqStrings("capabilities", &info.Capabilities),
	})
}

// EncodeHandshakeResponse writes an ahp/handshake result; session_token, config and each
// config field are left out when unset, as the reference does.
func EncodeHandshakeResponse(r *ahpv1.HandshakeResponse) ([]byte, error) {
	r = nonNil(r)
	out := map[string]any{
		"protocol_version": r.GetProtocolVersion(),
		"harness_info": map[string]any{
			"name":         r.GetHarnessInfo().GetName(),
			"version":      r.GetHarnessInfo().GetVersion(),
			"capabilities": stringsJSON(r.GetHarnessInfo().GetCapabilities()),
		},
	}
	putString(out, "session_token", r.SessionToken)
	if c := r.GetConfig(); c != nil {
		cfg := map[string]any{}
		if c.TimeoutMs != nil {
			cfg["timeout_ms"] = u64JSON(c.GetTimeoutMs())
		}
		if c.BatchSize != nil {
			cfg["batch_size"] = u64JSON(c.GetBatchSize())
		}
		if c.MaxDepth != nil {
			cfg["max_depth"] = u64JSON(uint64(c.GetMaxDepth()))
		}
		out["config"] = cfg
	}
	return jsonwire.Marshal(out)
}

// decodeQueryRequest reads ahp/query params. payload is required; null is a payload.
func decodeQueryRequest(path string, v any) (*ahpv1.QueryRequest, error) {
	r := &ahpv1.QueryRequest{}
	return readParams(r, path, v, "QueryRequest", []structField{
		reqBounded("session_id", limits.ID, &r.SessionId),
		reqBounded("agent_id", limits.ID, &r.AgentId),
		reqString("query_type", &r.QueryType),
		reqValue("payload", &r.Payload),
	})
}

// DecodeQueryResponse reads an ahp/query result. answer is required; null is an answer.
func DecodeQueryResponse(path string, v any) (*ahpv1.QueryResponse, error) {
	r := &ahpv1.QueryResponse{}
	return readParams(r, path, v, "QueryResponse", []structField{
		reqValue("answer", &r.Answer),
		optString("reason", &r.Reason),
		optStrings("alternatives", &r.Alternatives),
	})
}

// EncodeQueryResponse writes an ahp/query result: answer always (null when unset), reason
// and alternatives only when set. The decision field is not on the Harness wire.
func EncodeQueryResponse(r *ahpv1.QueryResponse) ([]byte, error) {
	r = nonNil(r)
	out := map[string]any{"answer": valueJSON(r.GetAnswer())}
	putString(out, "reason", r.Reason)
	putStrings(out, "alternatives", r.GetAlternatives())
	return jsonwire.Marshal(out)
}

// readBatch reads ahp/batch params {"events": [...]} ("missing field `events`" without
// it; [] is allowed). Entries are read as readEventParams reads them, with paths
// path.events[i]; the first bad entry fails the whole batch with serde's message. A batch carries
// no per-event request id, so every entry gets a synthesized id that includes its index. The
// bridge then applies checkBatchSize, and per entry ValidateShape and CheckBatchable.
func readBatch(path string, v any) ([]*EventParams, error) {
	if err := checkNumbers(path, v); err != nil {
		return nil, err
	}
	events := []*EventParams{}
	err := readStruct(path, v, "BatchRequest", []structField{{name: "events", decode: func(p string, v any) error {
		i := 0
		return readSeq(p, v, func(p string, v any) error {
			ev, err := readEvent(p, v, "", i)
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

// checkBatchSize rejects a batch longer than cfg.batch_size (unset: no limit): "Batch size
// 101 exceeds configured limit 100" (-32602, no prefix). Exactly batch_size events are allowed.
func checkBatchSize(n int, cfg *ahpv1.HarnessConfig) error {
	if cfg == nil || cfg.BatchSize == nil || uint64(n) <= cfg.GetBatchSize() {
		return nil
	}
	return &jsonwire.FieldError{Path: "events", Message: fmt.Sprintf("Batch size %d exceeds configured limit %d", n, cfg.GetBatchSize())}
}

// EncodeBatchResult writes an ahp/batch result {"decisions": [...]}, in order.
func EncodeBatchResult(decisions []*ahpv1.HarnessDecision) ([]byte, error) {
	list, err := listJSON("decisions", decisions, decisionJSON)
	if err != nil {
		return nil, err
	}
	return jsonwire.Marshal(map[string]any{"decisions": list})
}

// DecodeBatchResult reads an ahp/batch result.
func DecodeBatchResult(path string, v any) ([]*ahpv1.HarnessDecision, error) {
	if err := checkNumbers(path, v); err != nil {
		return nil, err
	}
	decisions := []*ahpv1.HarnessDecision{}
	err := readStruct(path, v, "BatchResponse", []structField{{name: "decisions", decode: func(p string, v any) error {
		return readSeqInto(p, v, &decisions, decodeDecision)
	}}})
	if err != nil {
		return nil, err
	}
	return decisions, nil
}
