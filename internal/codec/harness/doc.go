// Package harness is the Agent Harness Protocol v2.4 (a3s-ahp 2.4.0) codec: AhpEvent params with
// context and metadata, every typed and contract payload, generic and typed decisions in their
// exact wire shapes, handshake, query and batch, each to and from its ahp.v1 message, and the
// rendering of a canonical decision in Harness terms (RenderDecision, RenderTyped).
//
// The package is pure: no I/O, no clocks, no state that changes. It takes params already parsed
// into generic JSON values (numbers as json.Number) and writes JSON bytes; the JSON-RPC envelope
// around them is not its business.
//
// Rules it owns: the reference server's serde behaviour (required fields, integer widths, f32
// printing, unit/newtype/struct enum forms, "unknown variant" texts), the event-level checks the
// reference makes (depth, delivery, batchability, batch size) and the lossless round trip:
// members with no canonical home are kept as an overlay and written back.
//
// A request is checked in the reference server's order, and each failure gets the code and
// message the reference answers (rpc.go, the dialect's error -> wire mapping):
//
//	p, e := CheckEvent(params, id, cfg) // read: -32602 "Invalid params: " + message
//	                                    // shape: -32602 "Invalid event: " + message
//	                                    // delivery: -32602 message
//	                                    // typed payload: -32603 "Handler error: " + message
//
// CheckNotification runs read, shape and delivery for a notification, whose errors the
// reference drops on stdio and WebSocket and answers on HTTP as -32603 "Handler error: " +
// message ("Serialization error: " in front of a read failure). CheckBatch reads an ahp/batch
// and checks its size and then each entry's shape and batchability; CheckHandshake and
// CheckQuery read the other two requests. Answers are written with EncodeDecision,
// EncodeTypedDecision, EncodeBatchResult and the other Encode functions, usually after
// RenderDecision or RenderTyped turned the canonical decision into the caller's terms.
//
// Errors from reading and checking are *jsonwire.FieldError. Path is the JSON path of the
// offending value; Message is exactly the text the reference puts after its "Invalid params: " /
// "Invalid event: " / "Handler error: " prefix. Check* wrap them in an *Error with the code.
package harness
