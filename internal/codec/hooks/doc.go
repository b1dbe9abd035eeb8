// Package hooks is the Agent Hooks Protocol v0.1 codec: JSON-RPC messages (hooks/intercept,
// hooks/observe and hooks/capabilities requests and their responses), events, intercept results,
// capabilities and portable registrations, each to and from its ahp.v1 message; the error codes
// and error objects of the protocol; and RenderResult, which expresses a canonical decision as a
// v0.1 result.
//
// The package is pure: no I/O, no clocks, no state that changes. DecodeMessage reads one message
// (without its stdio line terminator); EncodeMessage writes one.
//
// Rules it owns: the v0.1 JSON Schemas (required members, types, formats, reverse-DNS names,
// safe integers, which event types each method takes), the JSON-RPC 2.0 envelope as the Hooks
// specification states it, and which JSON-RPC code each failure gets (ErrorResponse). JSON syntax
// and duplicate keys are internal/codec/jsonwire's; canonical names are internal/names'.
// Errors carry the JSON path of the offending value and never its content, so they are safe to
// send.
package hooks
