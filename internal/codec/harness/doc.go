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
// Reading an ahp/event request follows the reference server's order, one function per step, so a
// bridge reproduces its answers:
//
//	p, err := ReadEvent("params", params, id) // -32602 "Invalid params: " + err message
//	err = p.ValidateShape(cfg)                // -32602 "Invalid event: " + err message
//	err = p.CheckDelivery(false)              // -32602 err message
//	err = p.ParseTypedPayload()               // -32603 "Handler error: " + err message
//
// A notification runs ReadEvent, ValidateShape and CheckDelivery(true); the reference drops
// its errors on stdio and WebSocket and answers them on HTTP as -32603 "Handler error: " + message,
// with "Serialization error: " in front of a ReadEvent message. ahp/batch is
// ReadBatch, CheckBatchSize, then per entry ValidateShape and CheckBatchable.
// Answers are written with EncodeDecision and EncodeTypedDecision, usually after
// RenderDecision or RenderTyped turned the canonical decision into the caller's
// terms.
//
// CheckEvent, CheckNotification, CheckBatch, CheckHandshake and CheckQuery (rpc.go) run these
// steps for a bridge and give, for each failure, the code and message the reference answers: the
// dialect's error -> wire mapping.
//
// Errors from reading and checking are *jsonwire.FieldError. Path is the JSON path of the
// offending value; Message is exactly the text the reference puts after its "Invalid params: " /
// "Invalid event: " / "Handler error: " prefix.
package harness
