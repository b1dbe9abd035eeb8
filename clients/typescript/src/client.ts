// A small typed client for ahp-server: the four ahp.v1 services over one transport.
//
// Transports (all from @connectrpc/connect-node):
//   protocol "connect"  — Connect protocol, HTTP/2 (h2c on http://) or HTTP/1.1
//   protocol "grpc"     — gRPC, HTTP/2 only
//   protocol "grpc-web" — gRPC-Web, HTTP/2 or HTTP/1.1
// Client-streaming and bidi RPCs (ObserveStream, InterceptStream) need HTTP/2; over HTTP/1.1 use
// the unary and server-streaming RPCs only.

import type { MessageInitShape } from "@bufbuild/protobuf";
import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import {
  Http2SessionManager,
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import {
  HarnessService,
  InterceptService,
  ObservationService,
  TypedDecisionService,
  type WatchRequestSchema,
  type WatchResponse,
} from "../gen/ahp/v1/service_pb.js";

/** Wire protocol spoken to ahp-server. */
export type Protocol = "connect" | "grpc" | "grpc-web";

/** HTTP version; "2" is h2c with prior knowledge on an http:// URL. */
export type HttpVersion = "1.1" | "2";

/** Options for {@link createAhpClient}. */
export interface AhpClientOptions {
  /** Server base URL as ahp-server prints it, e.g. "http://127.0.0.1:8080". */
  baseUrl: string;
  /** Wire protocol; default "connect". */
  protocol?: Protocol;
  /** HTTP version; default "2". gRPC accepts only "2". */
  httpVersion?: HttpVersion;
  /** Connect and gRPC-Web only: send JSON instead of binary protobuf; default false. */
  json?: boolean;
  /** Interceptors applied to every call (auth headers, logging, ...). */
  interceptors?: Interceptor[];
}

/** The four ahp.v1 service clients, sharing one transport (and one HTTP/2 connection). */
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
  /** Closes the HTTP/2 connection (aborting calls still in flight); a no-op over HTTP/1.1. */
  close(): void;
}

/** A transport and the means to close its connection. */
export interface AhpTransport {
  readonly transport: Transport;
  close(): void;
}

/** Creates the transport {@link createAhpClient} uses; exported for callers that build their own clients. */
export function createAhpTransport(options: AhpClientOptions): AhpTransport {
  const protocol = options.protocol ?? "connect";
  const httpVersion = options.httpVersion ?? "2";
  const common = {
    baseUrl: options.baseUrl,
    interceptors: options.interceptors ?? [],
  };
  if (protocol === "grpc") {
    if (httpVersion !== "2") {
      throw new Error('ahp client: gRPC needs httpVersion "2"');
    }
    if (options.json) {
      throw new Error("ahp client: the json option applies to the connect and grpc-web protocols only");
    }
    const sessionManager = new Http2SessionManager(options.baseUrl);
    return {
      transport: createGrpcTransport({ ...common, sessionManager }),
      close: () => sessionManager.abort(),
    };
  }
  const create = protocol === "connect" ? createConnectTransport : createGrpcWebTransport;
  const useBinaryFormat = !options.json;
  if (httpVersion === "2") {
    const sessionManager = new Http2SessionManager(options.baseUrl);
    return {
      transport: create({ ...common, useBinaryFormat, httpVersion: "2", sessionManager }),
      close: () => sessionManager.abort(),
    };
  }
  return {
    transport: create({ ...common, useBinaryFormat, httpVersion: "1.1" }),
    close: () => {},
  };
}

/**
 * Creates clients for the four ahp.v1 services on one transport.
 *
 * ```ts
 * const ahp = createAhpClient({ baseUrl: "http://127.0.0.1:8080", protocol: "grpc" });
 * const { decision } = await ahp.intercept.intercept({ event }, { timeoutMs: 2000 });
 * ahp.close();
 * ```
 */
export function createAhpClient(options: AhpClientOptions): AhpClient {
  const { transport, close } = createAhpTransport(options);
  return {
    intercept: createClient(InterceptService, transport),
    typed: createClient(TypedDecisionService, transport),
    observation: createClient(ObservationService, transport),
    harness: createClient(HarnessService, transport),
    transport,
    close,
  };
}

/** A live tail opened by {@link openWatch}. */
export interface WatchSubscription extends AsyncIterable<WatchResponse> {
  /** The next item; rejects with a ConnectError when the watch fails, Code.Canceled after close(). */
  next(): Promise<IteratorResult<WatchResponse>>;
  /** Ends the watch; the server drops the subscription. */
  close(): void;
}

/**
 * Opens ObservationService.Watch and resolves once the server has subscribed (it sends the response
 * headers then), so nothing published afterwards is missed. Rejects if the watch fails first.
 */
export async function openWatch(
  client: AhpClient,
  request: MessageInitShape<typeof WatchRequestSchema>,
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
