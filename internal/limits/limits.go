// Package limits holds the maximum lengths of identifiers — ids, names, sources, kinds — that the
// ahp.v1 schema states as protovalidate rules (string.max_len, counted in characters) and that the
// dialect codecs apply while they read JSON-RPC, so that every protocol and client meets the same
// rule and an over-long identifier is refused before anything keeps it. TestSchemaMatches holds
// the schema to these numbers.
package limits

import "unicode/utf8"

// Maximum lengths, in characters (Unicode code points; a character takes at most 4 bytes).
const (
	// ID bounds event, session and agent ids.
	ID = 256
	// CallID bounds tool call ids; a synthesized one is "call-" and an event id.
	CallID = 512
	// Name bounds tool names, agent types, models, MCP server and tool names and native event
	// names.
	Name = 256
	// Source bounds event sources (URIs) and query sources.
	Source = 1024
	// Time bounds an event's time as the sender wrote it.
	Time = 64
	// Kind bounds event type names as sent, providers and tool error categories.
	Kind = 128
	// Version bounds protocol versions.
	Version = 64
	// Path bounds the working directory and each workspace root of a session.
	Path = 4096
)

// Exceeds reports whether s is longer than max characters.
func Exceeds(s string, max int) bool {
	return len(s) > max && utf8.RuneCountInString(s) > max
}
