// Shared pieces of the client test suite: the server under test, the transport matrix, event builders.

import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { EventSchema, EventType, ToolKind, type Event } from "../gen/ahp/v1/event_pb.js";
import { createAhpClient, type AhpClient, type AhpClientOptions } from "../src/index.js";

/** Base URL of the running ahp-server (scripts/test-clients.sh sets it). */
export function serverUrl(): string {
  const url = process.env.AHP_SERVER_URL;
  if (!url) {
    throw new Error("AHP_SERVER_URL is not set: run scripts/test-clients.sh, or start ahp-server and export its URL");
  }
  return url;
}

/** Upper bound for one test, in milliseconds. */
export const TEST_TIMEOUT_MS = 15_000;
/** Deadline sent with every call, in milliseconds. */
export const CALL_TIMEOUT_MS = 5_000;

/** One entry of the transport matrix. */
export interface TransportCase {
  name: string;
  options: Omit<AhpClientOptions, "baseUrl">;
  /** Client-streaming and bidi RPCs work (HTTP/2 only). */
  clientStreams: boolean;
}

/** Every transport the tests run over. */
export const transports: TransportCase[] = [
  { name: "connect h2", options: { protocol: "connect", httpVersion: "2" }, clientStreams: true },
  { name: "connect http/1.1", options: { protocol: "connect", httpVersion: "1.1" }, clientStreams: false },
  { name: "connect+json http/1.1", options: { protocol: "connect", httpVersion: "1.1", json: true }, clientStreams: false },
  { name: "grpc", options: { protocol: "grpc", httpVersion: "2" }, clientStreams: true },
  { name: "grpc-web h2", options: { protocol: "grpc-web", httpVersion: "2" }, clientStreams: true },
  { name: "grpc-web http/1.1", options: { protocol: "grpc-web", httpVersion: "1.1" }, clientStreams: false },
];

/** A client for one transport case. */
export function clientFor(tc: TransportCase): AhpClient {
  return createAhpClient({ baseUrl: serverUrl(), ...tc.options });
}

/**
 * A fresh id. The server replays the remembered decision for a repeated (source, id, content), and
 * one server serves every run of the suite, so each event gets its own id.
 */
export function uid(prefix: string): string {
  return `ts-${prefix}-${randomUUID()}`;
}

/** Event source of every event the suite sends. */
export const SOURCE = "urn:ahp:clients:typescript-test";

/** A tool.before event for a shell command. */
export function shellEvent(command: string, sessionId = uid("session")): Event {
  const id = uid("shell");
  return create(EventSchema, {
    id,
    source: SOURCE,
    type: EventType.TOOL_BEFORE,
    session: { id: sessionId, cwd: "/tmp/project" },
    tool: { callId: `call-${id}`, name: "Bash", kind: ToolKind.SHELL, input: { command } },
  });
}

/** A tool.after event (an observation). */
export function toolAfterEvent(sessionId: string): Event {
  const id = uid("after");
  return create(EventSchema, {
    id,
    source: SOURCE,
    type: EventType.TOOL_AFTER,
    session: { id: sessionId },
    tool: { callId: `call-${id}`, name: "Bash", kind: ToolKind.SHELL, output: { kind: { case: "stringValue", value: "ok" } } },
  });
}
