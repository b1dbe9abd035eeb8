package convert

import (
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// harnessPayloadCodec reads and writes the payload struct of one typed or contract event type.
type harnessPayloadCodec struct {
	decode func(path string, v any) (proto.Message, error)
	encode func(m proto.Message, e harnessEnc) (map[string]any, error)
}

// harnessCodecOf adapts a typed decoder/encoder pair to harnessPayloadCodec.
func harnessCodecOf[T proto.Message](dec func(string, any) (T, error), enc func(T, harnessEnc) (map[string]any, error)) harnessPayloadCodec {
	return harnessPayloadCodec{
		decode: func(path string, v any) (proto.Message, error) {
			m, err := dec(path, v)
			if err != nil {
				return nil, err
			}
			return m, nil
		},
		encode: func(m proto.Message, e harnessEnc) (map[string]any, error) {
			t, ok := m.(T)
			if !ok || !m.ProtoReflect().IsValid() {
				return nil, fmt.Errorf("convert: want a non-nil %T, got %T", *new(T), m)
			}
			return enc(t, e)
		},
	}
}

// harnessPayloadCodecs holds the payload struct of every event type whose payload the reference
// parses. The keys are also the names of the matching Event.body fields.
var harnessPayloadCodecs = map[string]harnessPayloadCodec{
	"idle":               harnessCodecOf(harnessDecodeIdle, harnessIdleJSON),
	"intent_detection":   harnessCodecOf(harnessDecodeIntentDetection, harnessIntentDetectionJSON),
	"context_perception": harnessCodecOf(harnessDecodeContextPerception, harnessContextPerceptionJSON),
	"memory_recall":      harnessCodecOf(harnessDecodeMemoryRecall, harnessMemoryRecallJSON),
	"planning":           harnessCodecOf(harnessDecodePlanning, harnessPlanningJSON),
	"reasoning":          harnessCodecOf(harnessDecodeReasoning, harnessReasoningJSON),
	"rate_limit":         harnessCodecOf(harnessDecodeRateLimit, harnessRateLimitJSON),
	"confirmation":       harnessCodecOf(harnessDecodeConfirmation, harnessConfirmationJSON),
	"run_lifecycle":      harnessCodecOf(harnessDecodeRunLifecycle, harnessRunLifecycleJSON),
	"task_list":          harnessCodecOf(harnessDecodeTaskList, harnessTaskListJSON),
	"verification":       harnessCodecOf(harnessDecodeVerification, harnessVerificationJSON),
}

// DecodeHarnessPayload reads the payload of a typed event (idle, intent_detection,
// context_perception, memory_recall, planning, reasoning, rate_limit, confirmation) or a run
// contract event (run_lifecycle, task_list, verification) into its message (*ahpv1.IdlePayload,
// ..., *ahpv1.RunLifecycle, ...). Errors carry serde's message without the reference's
// "Serialization error: " prefix. Serde defaults are not filled in.
func DecodeHarnessPayload(eventType, path string, v any) (proto.Message, error) {
	c, ok := harnessPayloadCodecs[eventType]
	if !ok {
		return nil, fmt.Errorf("convert: harness event type %q has no payload schema", eventType)
	}
	if err := harnessCheckNumbers(path, v); err != nil {
		return nil, err
	}
	return c.decode(path, v)
}

// EncodeHarnessPayload writes a typed or run contract payload message the way the reference
// re-serializes it: keys sorted, serde defaults filled in (domain "general", constraints
// {"include_sources":true,"max_context_length":null,"max_results":null}, ...), Options written or
// skipped exactly as serde does.
func EncodeHarnessPayload(m proto.Message) ([]byte, error) {
	name, ok := harnessPayloadName(m)
	if !ok {
		return nil, fmt.Errorf("convert: %T is not a Harness payload message", m)
	}
	obj, err := harnessPayloadCodecs[name].encode(m, harnessSerde)
	if err != nil {
		return nil, err
	}
	return marshalJSON(obj)
}

// harnessPayloadName finds the event type whose payload message type m is.
func harnessPayloadName(m proto.Message) (string, bool) {
	if m == nil {
		return "", false
	}
	fields := (&ahpv1.Event{}).ProtoReflect().Descriptor().Oneofs().ByName("body").Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Message().FullName() == m.ProtoReflect().Descriptor().FullName() {
			return string(fd.Name()), true
		}
	}
	return "", false
}

// harnessBody returns the event's body oneof: the field name (an event type name) and message.
func harnessBody(ev *ahpv1.Event) (string, proto.Message) {
	r := ev.ProtoReflect()
	fd := r.WhichOneof(r.Descriptor().Oneofs().ByName("body"))
	if fd == nil {
		return "", nil
	}
	return string(fd.Name()), r.Get(fd).Message().Interface()
}

// harnessSetBody sets the body oneof field named name (an event type name) to m.
func harnessSetBody(ev *ahpv1.Event, name string, m proto.Message) {
	r := ev.ProtoReflect()
	fd := r.Descriptor().Fields().ByName(protoreflect.Name(name))
	r.Set(fd, protoreflect.ValueOfMessage(m.ProtoReflect()))
}
