// Package convert translates between the JSON wire forms of the two AHP protocols and the typed
// ahp.v1 messages, and between each dialect's event and the one canonical event.
//
//   - Agent Hooks Protocol v0.1: hooks/intercept params and results, hooks/observe params, JSON-RPC
//     errors and portable registrations (files hooks*.go).
//   - Agent Harness Protocol v2.4: AhpEvent with context and metadata, every typed and contract
//     payload, generic and typed decisions in their exact wire shapes, handshake, query and batch
//     (files harness*.go).
//
// Everything here is pure: no I/O, no clocks, no globals that change. Errors are *FieldError values
// that name the offending field path. Round trips are lossless: fields a dialect sends that have no
// canonical home are kept (unknown_fields, payload) and written back.
package names

// Namespace is the project's reverse-DNS namespace for extension keys, metadata keys and error
// codes it adds to either dialect (docs/compatibility.md).
const Namespace = "dev.ahpgateway"
