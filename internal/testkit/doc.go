// Package testkit holds what the tests of several packages need alike: canonical event builders,
// HTTP/2 cleartext (h2c) clients and loopback servers, and a log sink a test can wait on.
// Package memhttp, below it, serves HTTP in memory.
//
// The kit imports no other internal package (gen/ and third-party code only), so the tests of
// any package can use it without an import cycle. It is for tests only.
package testkit
