// Package names holds the project's canonical names, the ones every layer shares and no dialect
// owns: event type names ("tool.before", from the event_name option in proto/ahp/v1), tool kinds
// (the documented tool-name table, kind names and parsing), effect kinds, the wire names of
// closed enums, and the reverse-DNS Namespace of the project's extension keys.
//
// The decision core, policy, audit, metrics and the typed deciders import this package instead of
// a codec. It is pure: no I/O, and the only state is caches of what the proto descriptors say.
package names

// Namespace is the project's reverse-DNS namespace for extension keys, metadata keys and error
// codes it adds to either dialect (docs/compatibility.md).
const Namespace = "dev.ahpgateway"
