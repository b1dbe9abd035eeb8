package hooks

import (
	"encoding/json"
	"strconv"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// Closed value sets of the draft execution records.
var (
	toolOutcomes      = []string{"ok", "error", "denied", "cancelled", "timeout"}
	skipReasons       = []string{"supplied_result", "policy", "cancelled", "timeout", "other"}
	usageKinds        = []string{"amount", "total"}
	usageScopes       = []string{"attempt", "turn"}
	usageCompleteness = []string{"complete", "partial", "unknown"}
	usageProvenance   = []string{"provider", "estimate", "mixed"}
)

// decodeRecords reads execution, outcome, error, model, attempt and usage, with the tool.after
// rules: outcome in the closed set; outcome error requires the event-level error and every other
// outcome excludes it; output and error never coexist; denied requires execution skipped/policy.
func decodeRecords(o *object, ev *ahpv1.Event, typeName string) error {
	c := ev.Catalogue
	var err error
	if x, err := o.optionalObject("execution"); err != nil {
		return err
	} else if x != nil {
		if c.Execution, err = decodeExecution(x); err != nil {
			return err
		}
	}
	if x, err := o.optionalObject("error"); err != nil {
		return err
	} else if x != nil {
		if c.Error, err = decodeEventError(x); err != nil {
			return err
		}
	}
	switch typeName {
	case "session.end":
		if ev.Outcome, err = decodeOutcome(o); err != nil {
			return err
		}
	case "tool.after":
		if c.Outcome, err = o.requiredString("outcome", true); err != nil {
			return err
		}
		if !oneOf(c.Outcome, toolOutcomes...) {
			return invalid(o.at("outcome"), "must be one of ok, error, denied, cancelled, timeout")
		}
		switch {
		case c.Outcome == "error" && c.Error == nil:
			return invalid(o.at("error"), "required when outcome is error")
		case c.Outcome != "error" && c.Error != nil:
			return invalid(o.at("error"), "allowed only when outcome is error")
		case c.Error != nil && ev.GetTool().GetOutput() != nil:
			return invalid(o.at("tool.output"), "not allowed together with error")
		case c.Outcome == "denied" && (c.Execution.GetStatus() != "skipped" || c.Execution.GetReason() != "policy"):
			return invalid(o.at("execution"), "a denied outcome requires status skipped with reason policy")
		}
		if c.Outcome == "error" {
			ev.Type = ahpv1.EventType_EVENT_TYPE_TOOL_ERROR
		}
	default:
		if c.Outcome, err = o.optionalString("outcome"); err != nil {
			return err
		}
	}
	if x, err := o.optionalObject("model"); err != nil {
		return err
	} else if x != nil {
		c.Model = &ahpv1.ModelRef{}
		if c.Model.Id, err = x.requiredString("id", true); err != nil {
			return err
		}
		if c.Model.Provider, err = x.requiredString("provider", true); err != nil {
			return err
		}
		if c.Model.UnknownFields, err = x.rest(); err != nil {
			return err
		}
	}
	if x, err := o.optionalObject("attempt"); err != nil {
		return err
	} else if x != nil {
		c.Attempt = &ahpv1.Attempt{}
		if c.Attempt.Id, err = x.requiredString("id", true); err != nil {
			return err
		}
		raw, err := x.required("number")
		if err != nil {
			return err
		}
		n, ok := safeInteger(raw)
		if !ok || n < 1 {
			return invalid(x.at("number"), "must be an integer of at least 1")
		}
		c.Attempt.Number = uint64(n)
		if c.Attempt.UnknownFields, err = x.rest(); err != nil {
			return err
		}
	}
	if x, err := o.optionalObject("usage"); err != nil {
		return err
	} else if x != nil {
		if c.Usage, err = decodeUsage(x); err != nil {
			return err
		}
	}
	return nil
}

func decodeExecution(o *object) (*ahpv1.Execution, error) {
	x := &ahpv1.Execution{}
	var err error
	if x.Status, err = o.requiredString("status", false); err != nil {
		return nil, err
	}
	switch x.Status {
	case "executed":
		if err := o.forbid("reason", "allowed only when status is skipped"); err != nil {
			return nil, err
		}
	case "skipped":
		if x.Reason, err = o.requiredString("reason", false); err != nil {
			return nil, err
		}
		if !oneOf(x.Reason, skipReasons...) {
			return nil, invalid(o.at("reason"), "must be one of supplied_result, policy, cancelled, timeout, other")
		}
	default:
		return nil, invalid(o.at("status"), "must be executed or skipped")
	}
	if x.Detail, err = o.optionalString("detail"); err != nil {
		return nil, err
	}
	if x.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return x, nil
}

func decodeEventError(o *object) (*ahpv1.EventError, error) {
	e := &ahpv1.EventError{}
	var err error
	if e.Class, err = o.requiredString("class", true); err != nil {
		return nil, err
	}
	if e.Message, err = o.requiredString("message", false); err != nil {
		return nil, err
	}
	if e.Code, err = o.optionalValue("code"); err != nil {
		return nil, err
	}
	if e.Status, err = o.optionalValue("status"); err != nil {
		return nil, err
	}
	if e.Native, err = o.optionalValue("native"); err != nil {
		return nil, err
	}
	if e.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return e, nil
}

func decodeUsage(o *object) (*ahpv1.Usage, error) {
	u := &ahpv1.Usage{}
	for _, f := range []struct {
		key string
		dst *string
		set []string
	}{
		{"kind", &u.Kind, usageKinds}, {"scope", &u.Scope, usageScopes},
		{"completeness", &u.Completeness, usageCompleteness}, {"provenance", &u.Provenance, usageProvenance},
	} {
		s, err := o.requiredString(f.key, false)
		if err != nil {
			return nil, err
		}
		if !oneOf(s, f.set...) {
			return nil, invalid(o.at(f.key), "not an allowed value")
		}
		*f.dst = s
	}
	for _, f := range []struct {
		key string
		dst **uint64
	}{
		{"inputTokens", &u.InputTokens}, {"outputTokens", &u.OutputTokens},
		{"cacheReadTokens", &u.CacheReadTokens}, {"cacheWriteTokens", &u.CacheWriteTokens},
	} {
		raw, ok := o.m[f.key]
		if !ok {
			continue
		}
		n, ok := safeInteger(raw)
		if !ok || n < 0 {
			return nil, invalid(o.at(f.key), "must be a non-negative integer")
		}
		v := uint64(n)
		*f.dst = &v
		o.claim(f.key)
	}
	if o.has("cost") {
		s, err := o.requiredStruct("cost")
		if err != nil {
			return nil, err
		}
		u.Cost = s
	}
	var err error
	if u.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return u, nil
}

func (e encoder) records(out map[string]any, c *ahpv1.Catalogue) {
	if x := c.GetExecution(); x != nil {
		m := e.base(x.GetUnknownFields())
		putString(m, "status", x.GetStatus())
		putString(m, "reason", x.GetReason())
		putString(m, "detail", x.GetDetail())
		out["execution"] = m
	}
	if x := c.GetError(); x != nil {
		m := e.base(x.GetUnknownFields())
		putString(m, "class", x.GetClass())
		m["message"] = x.GetMessage()
		if x.GetCode() != nil {
			m["code"] = e.value(x.GetCode())
		}
		if x.GetStatus() != nil {
			m["status"] = e.value(x.GetStatus())
		}
		if x.GetNative() != nil {
			m["native"] = e.value(x.GetNative())
		}
		out["error"] = m
	}
	if x := c.GetModel(); x != nil {
		m := e.base(x.GetUnknownFields())
		putString(m, "id", x.GetId())
		putString(m, "provider", x.GetProvider())
		out["model"] = m
	}
	if x := c.GetAttempt(); x != nil {
		m := e.base(x.GetUnknownFields())
		putString(m, "id", x.GetId())
		m["number"] = jsonNumber(int64(x.GetNumber()))
		out["attempt"] = m
	}
	if x := c.GetUsage(); x != nil {
		m := e.base(x.GetUnknownFields())
		putString(m, "kind", x.GetKind())
		putString(m, "scope", x.GetScope())
		putString(m, "completeness", x.GetCompleteness())
		putString(m, "provenance", x.GetProvenance())
		for key, p := range map[string]*uint64{"inputTokens": x.InputTokens, "outputTokens": x.OutputTokens,
			"cacheReadTokens": x.CacheReadTokens, "cacheWriteTokens": x.CacheWriteTokens} {
			if p != nil {
				m[key] = jsonNumber(int64(*p))
			}
		}
		if x.GetCost() != nil {
			m["cost"] = e.object(x.GetCost())
		}
		out["usage"] = m
	}
}

func jsonNumber(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }
