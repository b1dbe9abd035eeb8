// Package jsonrpc is the JSON-RPC 2.0 envelope layer both AHP dialects share: Read parses one
// message once and reads its top level (jsonrpc, id, method, params, whether result or error is
// there, repeated members); the dialect codecs then take params, or for Agent Hooks the whole
// parsed document, from the Message instead of parsing again. It also writes responses in the
// member order the Agent Harness reference uses (jsonrpc, id, result|error; code, message).
//
// The package is pure: no I/O. It owns what JSON-RPC 2.0 itself says about a message (what makes
// a notification, a response, a usable id); what a dialect does with a broken envelope, and
// which code it answers, is the dialect's.
package jsonrpc
