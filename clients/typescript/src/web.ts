// @ahp-gateway/client for browsers (and any runtime with fetch): the four ahp.v1 services over
// connect-web. Browsers speak Connect or gRPC-Web (not gRPC), over whatever HTTP version fetch
// negotiates; client-streaming and bidi RPCs are not available through fetch.

import type { Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { clientOn, credentialsInterceptor, type AhpClient, type Credentials } from "./core.js";

export * from "./core.js";
export * from "./schema.js";

/** Wire protocol spoken to ahp-server from a browser. */
export type WebProtocol = "connect" | "grpc-web";

/** Options for {@link createAhpClient}. */
export interface AhpWebClientOptions extends Credentials {
  /** Server base URL, e.g. "https://ahp.example.internal" or "" for the page's own origin. */
  baseUrl: string;
  /** Wire protocol; default "connect". */
  protocol?: WebProtocol;
  /** Send JSON instead of binary protobuf; default false. */
  json?: boolean;
  /** Interceptors applied to every call, after the credential is set. */
  interceptors?: Interceptor[];
  /** The fetch to use; default globalThis.fetch. */
  fetch?: typeof globalThis.fetch;
}

/** Creates clients for the four ahp.v1 services over fetch. `close()` is a no-op. */
export function createAhpClient(options: AhpWebClientOptions): AhpClient {
  const auth = credentialsInterceptor(options);
  const create = (options.protocol ?? "connect") === "connect" ? createConnectTransport : createGrpcWebTransport;
  const transport = create({
    baseUrl: options.baseUrl,
    useBinaryFormat: !options.json,
    interceptors: [...(auth ? [auth] : []), ...(options.interceptors ?? [])],
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return clientOn(transport, () => {});
}
