// Package typed gives the eight Agent Harness Protocol v2.4 typed events (idle, intent_detection,
// context_perception, memory_recall, planning, reasoning, rate_limit, confirmation) real answers and
// combines them with what the policy decided.
//
// Decide is the entry point. It answers every typed event in three steps; the first that applies
// wins:
//
//  1. The policy's generic verdict. Deny becomes the event type's refusal. Ask and escalate become a
//     confirmation escalate; the other types cannot ask, so they refuse with "approval required: …"
//     and the fallback is recorded. Defer becomes an idle defer or a rate_limit retry; the other
//     types cannot wait, so they refuse the same way.
//  2. A rule's typed answer (policy.Result.Typed), when its action is one the event type accepts.
//     A refusal action (block, reject, skip) is the type's refusal; any other action goes to the
//     type's decider. An answer with an unacceptable action is ignored and noted in the decision's
//     metadata.
//  3. The built-in behaviour of the event type, tuned by policy.Settings.
//
// No event type ever answers "not supported". The package is pure: no I/O, no clock (time is passed
// in) and no mutable globals. docs/typed-decisions.md describes every behaviour and default.
package typed
