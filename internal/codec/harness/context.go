package harness

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

func decodeContext(path string, v any) (*ahpv1.EventContext, error) {
	c := &ahpv1.EventContext{}
	return readInto(c, path, v, "EventContext", []structField{
		{name: "recent_facts", optional: true, decode: func(p string, v any) error {
			if v == nil {
				return nil
			}
			facts, err := decodeFacts(p, v)
			if err == nil {
				c.RecentFacts = &ahpv1.FactList{Values: facts}
			}
			return err
		}},
		opt("memory_summary", &c.MemorySummary, decodeMemorySummary),
		opt("session_stats", &c.SessionStats, decodeSessionStats),
		optString("current_task", &c.CurrentTask),
		optMap("capabilities", &c.Capabilities),
	})
}

func contextJSON(c *ahpv1.EventContext, e encoder) map[string]any {
	c = nonNil(c)
	out := map[string]any{}
	if c.GetRecentFacts() != nil {
		out["recent_facts"] = factsJSON(c.GetRecentFacts().GetValues(), e)
	}
	if m := c.GetMemorySummary(); m != nil {
		out["memory_summary"] = map[string]any{
			"memory_type":   m.GetMemoryType(),
			"total_items":   u64JSON(m.GetTotalItems()),
			"recent_topics": stringsJSON(m.GetRecentTopics()),
		}
	}
	if s := c.GetSessionStats(); s != nil {
		out["session_stats"] = map[string]any{
			"total_actions": u64JSON(s.GetTotalActions()),
			"total_tokens":  i64JSON(int64(s.GetTotalTokens())),
			"duration_ms":   u64JSON(s.GetDurationMs()),
			"error_count":   u64JSON(s.GetErrorCount()),
		}
	}
	putString(out, "current_task", c.CurrentTask)
	putMap(out, "capabilities", c.GetCapabilities())
	return out
}

func decodeMemorySummary(path string, v any) (*ahpv1.MemorySummary, error) {
	m := &ahpv1.MemorySummary{}
	return readInto(m, path, v, "MemorySummary", []structField{
		reqString("memory_type", &m.MemoryType),
		reqUint("total_items", usizeType, &m.TotalItems),
		reqStrings("recent_topics", &m.RecentTopics),
	})
}

func decodeSessionStats(path string, v any) (*ahpv1.SessionStats, error) {
	s := &ahpv1.SessionStats{}
	return readInto(s, path, v, "SessionStats", []structField{
		reqUint("total_actions", usizeType, &s.TotalActions),
		{name: "total_tokens", decode: func(p string, v any) error {
			i, err := readSigned(p, v, i32Type)
			s.TotalTokens = int32(i) // in range: readSigned checked i32
			return err
		}},
		reqUint("duration_ms", u64Type, &s.DurationMs),
		reqUint("error_count", usizeType, &s.ErrorCount),
	})
}

// decodeFacts reads a Vec<Fact>.
func decodeFacts(path string, v any) ([]*ahpv1.Fact, error) {
	facts := []*ahpv1.Fact{}
	err := readSeq(path, v, func(p string, v any) error {
		f := &ahpv1.Fact{}
		err := readStruct(p, v, "Fact", []structField{
			reqString("content", &f.Content),
			reqString("source", &f.Source),
			reqF32("confidence", &f.Confidence),
		})
		facts = append(facts, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	return facts, nil
}

func factsJSON(facts []*ahpv1.Fact, e encoder) []any {
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
