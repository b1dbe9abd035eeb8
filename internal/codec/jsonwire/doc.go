// Package jsonwire is the JSON plumbing both dialect codecs share: parsing one document into
// generic values (Parse, one pass, with duplicate-key detection), writing generic values and
// protobuf Structs in exactly encoding/json's bytes without HTML escaping (Marshal, Append,
// AppendString), conversion between generic values and google.protobuf.Value, the RFC 3339
// date-time and RFC 3986 URI validators, and FieldError, the error that names a JSON path.
//
// Parse has two halves: a one-pass parser that builds the values for every document it accepts,
// and encoding/json for the rest, which finds the exact error to report. The one-pass parser may
// be stricter than encoding/json but never more lenient (FuzzJSONParseMatchesStd); it earns its
// place on the bridge's round trip (docs/performance.md).
//
// The package is pure: no I/O, no clocks; it keeps no state. It owns JSON syntax (RFC 8259,
// UTF-8, nesting) and the duplicate-key rule; what a member must hold is the codecs' business.
package jsonwire
