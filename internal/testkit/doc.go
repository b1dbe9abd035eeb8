// Package testkit holds what the tests of several packages need alike, so that no package's
// tests carry their own copy:
//
//   - canonical events: Event and ShellEvent with options (Session, Agent, Source, Type, Tool,
//     HooksOrigin, HarnessOrigin);
//   - HTTP: H2CClient for HTTP/2 without TLS, H2CProtocols for a server, and ServeLoopback /
//     StartLoopback for a server on a loopback port where the code under test dials a URL itself
//     (package memhttp serves in memory where the test makes the client);
//   - LogBuffer, a log sink a test can wait on (WaitFor) instead of sleeping, and LockedWriter;
//   - PolicyYAML, the policy the decision tests share, and ReplaceFile, which swaps a file's
//     content atomically as editors and ConfigMap updates do;
//   - SocketPath, a short Unix socket path removed when the test ends;
//   - ServeTCP, which runs a Serve(ctx, ln) method on a loopback port until the test ends;
//   - Receive, which waits for a channel's next value at most WaitTimeout;
//   - CloseAtEnd, which closes something when the test ends and reports the error;
//   - SameJSON, which compares JSON documents whatever their spacing and key order;
//   - Discard, a logger that drops everything.
//
// The kit imports no other internal package (gen/ and third-party code only), so the tests of
// any package can use it without an import cycle. It is for tests only.
package testkit
