// What the Node and browser entry points share: the four service clients on one transport, the
// conveniences (decide, observe, watch), credentials, and helpers to build an event and read a
// decision. Nothing here picks a transport; index.ts (connect-node) and web.ts (connect-web) do.

import { create, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import { createClient, type CallOptions, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { Verdict, type Decision } from "../gen/ahp/v1/decision_pb.js";
import { EventSchema, EventType, ToolKind, type Event } from "../gen/ahp/v1/event_pb.js";
import {
  HarnessService,
  InterceptService,
  ObservationService,
  TypedDecisionService,
  type ObserveResponse,
  type WatchRequestSchema,
  type WatchResponse,
} from "../gen/ahp/v1/service_pb.js";

// Errors are connect-es ConnectErrors: `code` is the Connect code, `rawMessage` the server's message.
export { Code, ConnectError } from "@connectrpc/connect";

/** Credentials sent on every call. Set at most one; neither appears in errors or in the client object. */
export interface Credentials {
  /** Bearer token (a secret listed under `auth.tokens`), sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** API key (a secret listed under `auth.api_keys`), sent as `X-API-Key: <key>`. */
  apiKey?: string;
}

/**
 * An interceptor that sends one credential on every call. The secret lives only in this closure,
 * so printing the client or an error never shows it.
 */
export function credentialsInterceptor(credentials: Credentials): Interceptor | undefined {
  const { token, apiKey } = credentials;
  if (token !== undefined && apiKey !== undefined) {
    throw new Error("ahp client: set token or apiKey, not both (the server refuses a call that carries two credentials)");
  }
  if (token === undefined && apiKey === undefined) {
    return undefined;
  }
  if ((token ?? apiKey) === "") {
    throw new Error("ahp client: the credential is empty (is its environment variable set?)");
  }
  const [name, value] = token !== undefined ? ["Authorization", `Bearer ${token}`] : ["X-API-Key", apiKey as string];
  return (next) => (req) => {
    req.header.set(name, value);
    return next(req);
  };
}

/** A tool call to decide on or record: what {@link toolEvent} turns into an {@link Event}. */
export interface ToolCall {
  /** Tool name as the harness calls it ("Bash", "Read", "mcp__github__create_issue", ...). */
  name: string;
  /** Tool kind; default ToolKind.OTHER. */
  kind?: ToolKind;
  /** Tool input (a JSON object), e.g. `{ command: "ls" }`. */
  input?: JsonObject;
  /** Session the call belongs to; Watch filters on it. */
  sessionId?: string;
  /** Event source (a URI naming the harness); default "urn:ahp:client". */
  source?: string;
  /** Event id; default a fresh UUID. The server replays its decision for a repeated (source, id, content). */
  id?: string;
  /** Tool call id; default derived from the event id. */
  callId?: string;
  /** Event type; default EventType.TOOL_BEFORE (a decision). Use TOOL_AFTER or TOOL_ERROR to observe. */
  type?: EventType;
}

/** Builds the event for one tool call (tool.before unless `call.type` says otherwise). */
export function toolEvent(call: ToolCall): Event {
  const id = call.id ?? crypto.randomUUID();
  return create(EventSchema, {
    id,
    source: call.source ?? "urn:ahp:client",
    type: call.type ?? EventType.TOOL_BEFORE,
    session: call.sessionId === undefined ? undefined : { id: call.sessionId },
    tool: { callId: call.callId ?? `call-${id}`, name: call.name, kind: call.kind ?? ToolKind.OTHER, input: call.input },
  });
}

/** The parts of a {@link Decision} a caller usually acts on. */
export interface DecisionSummary {
  /** True for VERDICT_ALLOW: the action may run as asked. */
  allowed: boolean;
  /** The combined verdict. */
  verdict: Verdict;
  /** Why: the first deny, ask or escalate effect's reason, or "" when there is none. */
  reason: string;
  /** The deny effect's code (e.g. "dev.ahpgateway.policy.destructive"), or "". */
  code: string;
  /** The rule behind the first effect, or "". */
  ruleId: string;
  /** Decision id, for audit and correlation. */
  decisionId: string;
}

/** Reads a decision: whether it allows the action and, if not, why. */
export function readDecision(decision: Decision | undefined): DecisionSummary {
  if (!decision) {
    throw new Error("ahp client: the answer carries no decision");
  }
  const summary: DecisionSummary = {
    allowed: decision.verdict === Verdict.ALLOW,
    verdict: decision.verdict,
    reason: "",
    code: "",
    ruleId: "",
    decisionId: decision.decisionId,
  };
  for (const effect of decision.effects) {
    const e = effect.effect;
    if (e.case === "deny" || e.case === "ask" || e.case === "escalate") {
      summary.reason = e.value.reason;
      summary.code = e.case === "deny" ? e.value.code : "";
      summary.ruleId = effect.ruleId;
      break;
    }
  }
  return summary;
}

/** Options for the calls the conveniences make. */
export type AhpCallOptions = Pick<CallOptions, "signal" | "timeoutMs" | "headers">;

/** A live tail opened by {@link openWatch} or {@link AhpClient.watch}. */
export interface WatchSubscription extends AsyncIterable<WatchResponse> {
  /** The next item; rejects with a ConnectError when the watch fails, Code.Canceled after close(). */
  next(): Promise<IteratorResult<WatchResponse>>;
  /** Ends the watch; the server drops the subscription. */
  close(): void;
}

/** What Watch can filter on (every field optional): session, event types, tool kinds, decisions only. */
export type WatchFilter = MessageInitShape<typeof WatchRequestSchema>;

/** The four ahp.v1 service clients, sharing one transport (and one HTTP/2 connection), and the conveniences. */
export interface AhpClient {
  /** Decisions on blocking events: Intercept, InterceptStream, InterceptBatch. */
  readonly intercept: Client<typeof InterceptService>;
  /** The eight Harness typed decisions: Idle, DetectIntent, ..., HandleRateLimit, Confirm. */
  readonly typed: Client<typeof TypedDecisionService>;
  /** Observe, ObserveStream and the live tail Watch. */
  readonly observation: Client<typeof ObservationService>;
  /** Handshake, Query and GetCapabilities. */
  readonly harness: Client<typeof HarnessService>;
  /** The transport, for building other clients on the same connection. */
  readonly transport: Transport;
  /** Asks for a decision on one tool call (Intercept). Rejects with a ConnectError. */
  decide(call: ToolCall | Event, options?: AhpCallOptions): Promise<Decision>;
  /** Records one event that needs no decision (Observe); `duplicate` is true when it was already recorded. */
  observe(event: Event, options?: AhpCallOptions): Promise<ObserveResponse>;
  /** Opens a live tail with a filter; resolves once the server has subscribed (see {@link openWatch}). */
  watch(filter?: WatchFilter, options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<WatchSubscription>;
  /** Closes the HTTP/2 connection (aborting calls still in flight); a no-op over HTTP/1.1 and fetch. */
  close(): void;
}

/** Builds an {@link AhpClient} on a transport; the entry points call it with their own transports. */
export function clientOn(transport: Transport, close: () => void): AhpClient {
  const ahp: AhpClient = {
    intercept: createClient(InterceptService, transport),
    typed: createClient(TypedDecisionService, transport),
    observation: createClient(ObservationService, transport),
    harness: createClient(HarnessService, transport),
    transport,
    async decide(call, options) {
      const event = "$typeName" in call ? call : toolEvent(call);
      const { decision } = await ahp.intercept.intercept({ event }, options);
      if (!decision) {
        throw new Error("ahp client: Intercept answered without a decision");
      }
      return decision;
    },
    observe(event, options) {
      return ahp.observation.observe({ event }, options);
    },
    watch(filter = {}, options) {
      return openWatch(ahp, filter, options);
    },
    close,
  };
  return ahp;
}

/**
 * Opens ObservationService.Watch and resolves once the server has subscribed (it sends the response
 * headers then), so nothing published afterwards is missed. Rejects if the watch fails first.
 */
export async function openWatch(
  client: Pick<AhpClient, "observation">,
  request: WatchFilter,
  options: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<WatchSubscription> {
  const abort = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, abort.signal]) : abort.signal;
  let subscribed!: () => void;
  const headers = new Promise<void>((resolve) => (subscribed = resolve));
  const it = client.observation
    .watch(request, { signal, timeoutMs: options.timeoutMs, onHeader: () => subscribed() })
    [Symbol.asyncIterator]();
  // Reading starts the call; the first item stays pending for the caller's first next().
  let first: Promise<IteratorResult<WatchResponse>> | undefined = it.next();
  first.catch(() => {}); // the caller sees the error on next(); never an unhandled rejection
  await Promise.race([headers, first]);
  const sub: WatchSubscription = {
    next() {
      if (first) {
        const p = first;
        first = undefined;
        return p;
      }
      return it.next();
    },
    close() {
      abort.abort();
    },
    [Symbol.asyncIterator]() {
      return { next: () => sub.next() };
    },
  };
  return sub;
}
