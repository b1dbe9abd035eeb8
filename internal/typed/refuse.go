package typed

import (
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// Refuse sets d.Typed to the refusal of typed event type t with reason — block, or idle's defer,
// rate_limit's skip, confirmation's reject, as Decide refuses — and d.Verdict to deny. md becomes
// the variant's metadata where it has a metadata field. It is for answers made without a policy
// (the bridge failing closed) and fails only for a t that is not typed.
func Refuse(d *ahpv1.Decision, t ahpv1.EventType, reason string, md *structpb.Struct) error {
	k, ok := kinds[t]
	if !ok {
		return fmt.Errorf("typed: event.type: %s: %w", t, ErrNotTyped)
	}
	k.refuse(d, reason)
	d.Verdict = ahpv1.Verdict_VERDICT_DENY
	if variant, f, ok := metadataField(d); ok && md != nil {
		variant.Set(f, protoreflect.ValueOfMessage(md.ProtoReflect()))
	}
	return nil
}
