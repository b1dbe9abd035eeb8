// @ahp-gateway/client for Node: the four ahp.v1 services over connect-node.
//
// Transports:
//   protocol "connect"  — Connect protocol, HTTP/2 (h2c on http://) or HTTP/1.1
//   protocol "grpc"     — gRPC, HTTP/2 only
//   protocol "grpc-web" — gRPC-Web, HTTP/2 or HTTP/1.1
// Client-streaming and bidi RPCs (ObserveStream, InterceptStream) need HTTP/2; over HTTP/1.1 use
// the unary and server-streaming RPCs only. Browsers import "@ahp-gateway/client/web" instead.

import type { Interceptor, Transport } from "@connectrpc/connect";
import {
  Http2SessionManager,
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { clientOn, credentialsInterceptor, type AhpClient, type Credentials } from "./core.js";

export * from "./core.js";
export * from "./schema.js";

/** Wire protocol spoken to ahp-server. */
export type Protocol = "connect" | "grpc" | "grpc-web";

/** HTTP version; "2" is h2c with prior knowledge on an http:// URL. */
export type HttpVersion = "1.1" | "2";

/** Options for {@link createAhpClient}. */
export interface AhpClientOptions extends Credentials {
  /** Server base URL as ahp-server prints it, e.g. "http://127.0.0.1:8080". */
  baseUrl: string;
  /** Wire protocol; default "connect". */
  protocol?: Protocol;
  /** HTTP version; default "2". gRPC accepts only "2". */
  httpVersion?: HttpVersion;
  /** Connect and gRPC-Web only: send JSON instead of binary protobuf; default false. */
  json?: boolean;
  /** Interceptors applied to every call (logging, tracing, ...), after the credential is set. */
  interceptors?: Interceptor[];
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
  const auth = credentialsInterceptor(options);
  const common = {
    baseUrl: options.baseUrl,
    interceptors: [...(auth ? [auth] : []), ...(options.interceptors ?? [])],
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
 * const ahp = createAhpClient({ baseUrl: "http://127.0.0.1:8080", token: process.env.AHP_TOKEN });
 * const decision = await ahp.decide({ name: "Bash", kind: ToolKind.SHELL, input: { command: "ls" } });
 * ahp.close();
 * ```
 */
export function createAhpClient(options: AhpClientOptions): AhpClient {
  const { transport, close } = createAhpTransport(options);
  return clientOn(transport, close);
}
