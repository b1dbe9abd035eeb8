package convert

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// DecodeHarnessEventContext reads an AhpEvent context object (EventContext) strictly: every inner
// struct needs its required fields, unknown fields are ignored. Errors carry serde's wording
// ("missing field `total_tokens`") and the JSON path below path.
func DecodeHarnessEventContext(path string, v any) (*ahpv1.EventContext, error) {
	if err := harnessCheckNumbers(path, v); err != nil {
		return nil, err
	}
	return harnessDecodeContext(path, v)
}

// EncodeHarnessEventContext writes an EventContext as the reference serializes it: keys sorted,
// absent fields omitted, f32 confidences widened to f64.
func EncodeHarnessEventContext(c *ahpv1.EventContext) ([]byte, error) {
	return marshalJSON(harnessContextJSON(c, harnessSerde))
}

func harnessDecodeContext(path string, v any) (*ahpv1.EventContext, error) {
	c := &ahpv1.EventContext{}
	err := harnessStruct(path, v, "EventContext", []harnessField{
		{name: "recent_facts", optional: true, decode: func(p string, v any) error {
			if v == nil {
				return nil
			}
			facts, err := harnessDecodeFacts(p, v)
			if err == nil {
				c.RecentFacts = &ahpv1.FactList{Values: facts}
			}
			return err
		}},
		{name: "memory_summary", optional: true, decode: func(p string, v any) (err error) {
			if v != nil {
				c.MemorySummary, err = harnessDecodeMemorySummary(p, v)
			}
			return err
		}},
		{name: "session_stats", optional: true, decode: func(p string, v any) (err error) {
			if v != nil {
				c.SessionStats, err = harnessDecodeSessionStats(p, v)
			}
			return err
		}},
		harnessOptString("current_task", &c.CurrentTask),
		harnessOptMap("capabilities", &c.Capabilities),
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func harnessContextJSON(c *ahpv1.EventContext, e harnessEnc) map[string]any {
	c = harnessNonNil(c)
	out := map[string]any{}
	if c.GetRecentFacts() != nil {
		out["recent_facts"] = harnessFactsJSON(c.GetRecentFacts().GetValues(), e)
	}
	if m := c.GetMemorySummary(); m != nil {
		out["memory_summary"] = map[string]any{
			"memory_type":   m.GetMemoryType(),
			"total_items":   harnessU64JSON(m.GetTotalItems()),
			"recent_topics": harnessStringsJSON(m.GetRecentTopics()),
		}
	}
	if s := c.GetSessionStats(); s != nil {
		out["session_stats"] = map[string]any{
			"total_actions": harnessU64JSON(s.GetTotalActions()),
			"total_tokens":  harnessI64JSON(int64(s.GetTotalTokens())),
			"duration_ms":   harnessU64JSON(s.GetDurationMs()),
			"error_count":   harnessU64JSON(s.GetErrorCount()),
		}
	}
	harnessPutString(out, "current_task", c.CurrentTask)
	harnessPutMap(out, "capabilities", c.GetCapabilities())
	return out
}

func harnessDecodeMemorySummary(path string, v any) (*ahpv1.MemorySummary, error) {
	m := &ahpv1.MemorySummary{}
	err := harnessStruct(path, v, "MemorySummary", []harnessField{
		harnessReqString("memory_type", &m.MemoryType),
		harnessReqUint("total_items", harnessUsize, &m.TotalItems),
		harnessReqStrings("recent_topics", &m.RecentTopics),
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func harnessDecodeSessionStats(path string, v any) (*ahpv1.SessionStats, error) {
	s := &ahpv1.SessionStats{}
	err := harnessStruct(path, v, "SessionStats", []harnessField{
		harnessReqUint("total_actions", harnessUsize, &s.TotalActions),
		{name: "total_tokens", decode: func(p string, v any) error {
			i, err := harnessSigned(p, v, harnessI32)
			s.TotalTokens = int32(i) // in range: harnessSigned checked i32
			return err
		}},
		harnessReqUint("duration_ms", harnessU64, &s.DurationMs),
		harnessReqUint("error_count", harnessUsize, &s.ErrorCount),
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// harnessDecodeFacts reads a Vec<Fact>.
func harnessDecodeFacts(path string, v any) ([]*ahpv1.Fact, error) {
	facts := []*ahpv1.Fact{}
	err := harnessSeq(path, v, func(p string, v any) error {
		f := &ahpv1.Fact{}
		err := harnessStruct(p, v, "Fact", []harnessField{
			harnessReqString("content", &f.Content),
			harnessReqString("source", &f.Source),
			harnessReqF32("confidence", &f.Confidence),
		})
		facts = append(facts, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	return facts, nil
}

func harnessFactsJSON(facts []*ahpv1.Fact, e harnessEnc) []any {
	out := make([]any, len(facts))
	for i, f := range facts {
		out[i] = map[string]any{
			"content":    f.GetContent(),
			"source":     f.GetSource(),
			"confidence": e.f32(f.GetConfidence()),
		}
	}
	return out
}
