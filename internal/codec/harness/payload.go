package harness

import (
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// payloadCodec reads and writes the payload struct of one typed or contract event type.
type payloadCodec struct {
	decode func(path string, v any) (proto.Message, error)
	encode func(m proto.Message, e encoder) (map[string]any, error)
}

// codecOf adapts a typed decoder/encoder pair to payloadCodec.
func codecOf[T proto.Message](dec func(string, any) (T, error), enc func(T, encoder) (map[string]any, error)) payloadCodec {
	return payloadCodec{
		decode: decodeAs(dec),
		encode: func(m proto.Message, e encoder) (map[string]any, error) {
			t, err := messageAs[T](m)
			if err != nil {
				return nil, err
			}
			return enc(t, e)
		},
	}
}

// decodeAs adapts a decoder of T to one of proto.Message that returns a nil interface, not a
// typed nil, on error.
func decodeAs[T proto.Message](dec func(string, any) (T, error)) func(path string, v any) (proto.Message, error) {
	return func(path string, v any) (proto.Message, error) {
		m, err := dec(path, v)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}

// messageAs returns m as a T, or an error when it is another type or nil.
func messageAs[T proto.Message](m proto.Message) (T, error) {
	t, ok := m.(T)
	if !ok || !m.ProtoReflect().IsValid() {
		return t, fmt.Errorf("convert: want a non-nil %T, got %T", *new(T), m)
	}
	return t, nil
}

// payloadCodecs holds the payload struct of every event type whose payload the reference
// parses. The keys are also the names of the matching Event.body fields.
var payloadCodecs = map[string]payloadCodec{
	"idle":               codecOf(decodeIdle, idleJSON),
	"intent_detection":   codecOf(decodeIntentDetection, intentDetectionJSON),
	"context_perception": codecOf(decodeContextPerception, contextPerceptionJSON),
	"memory_recall":      codecOf(decodeMemoryRecall, memoryRecallJSON),
	"planning":           codecOf(decodePlanning, planningJSON),
	"reasoning":          codecOf(decodeReasoning, reasoningJSON),
	"rate_limit":         codecOf(decodeRateLimit, rateLimitJSON),
	"confirmation":       codecOf(decodeConfirmation, confirmationJSON),
	"run_lifecycle":      codecOf(decodeRunLifecycle, runLifecycleJSON),
	"task_list":          codecOf(decodeTaskList, taskListJSON),
	"verification":       codecOf(decodeVerification, verificationJSON),
}

// payloadBody returns the event's body oneof: the field name (an event type name) and message.
func payloadBody(ev *ahpv1.Event) (string, proto.Message) { return whichOneof(ev, "body") }

// oneofFieldOf names the field of container's oneof whose message type is m's (the typed
// decisions and the payloads are named by their event type this way).
func oneofFieldOf(container proto.Message, oneof protoreflect.Name, m proto.Message) (string, bool) {
	if m == nil {
		return "", false
	}
	fields := container.ProtoReflect().Descriptor().Oneofs().ByName(oneof).Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Message().FullName() == m.ProtoReflect().Descriptor().FullName() {
			return string(fd.Name()), true
		}
	}
	return "", false
}

// whichOneof returns the field of container's oneof that is set: its name and message, or ""
// and nil.
func whichOneof(container proto.Message, oneof protoreflect.Name) (string, proto.Message) {
	r := container.ProtoReflect()
	fd := r.WhichOneof(r.Descriptor().Oneofs().ByName(oneof))
	if fd == nil {
		return "", nil
	}
	return string(fd.Name()), r.Get(fd).Message().Interface()
}

// setBody sets the body oneof field named name (an event type name) to m.
func setBody(ev *ahpv1.Event, name string, m proto.Message) {
	r := ev.ProtoReflect()
	fd := r.Descriptor().Fields().ByName(protoreflect.Name(name))
	r.Set(fd, protoreflect.ValueOfMessage(m.ProtoReflect()))
}
