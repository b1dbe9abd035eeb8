// A client for Connect server streams (ObservationService.Watch, ApprovalService.Watch) over the Connect protocol with JSON: the request is one
// enveloped message, the response a stream of enveloped messages read from fetch's ReadableStream.
// An envelope is one flags byte (0x01 compressed, 0x02 end of stream), a 4-byte big-endian length
// and the message; the end-of-stream message is JSON {error?: {code, message}, metadata?}.

import { authHeaders, errorFrom, ApiError } from "./api.js";

const WATCH_PATH = "/ahp.v1.ObservationService/Watch";
const FLAG_COMPRESSED = 0x01;
const FLAG_END = 0x02;
const MAX_MESSAGE = 16 << 20; // a message larger than this ends the stream (the server caps events)

function envelope(json) {
  const body = new TextEncoder().encode(JSON.stringify(json));
  const out = new Uint8Array(5 + body.length);
  new DataView(out.buffer).setUint32(1, body.length, false);
  out.set(body, 5);
  return out;
}

// EnvelopeReader splits a byte stream into envelopes.
export class EnvelopeReader {
  constructor() { this.buf = new Uint8Array(0); }
  push(chunk) {
    const next = new Uint8Array(this.buf.length + chunk.length);
    next.set(this.buf);
    next.set(chunk, this.buf.length);
    this.buf = next;
  }
  // next returns {flags, data} or null when no whole envelope is buffered yet.
  next() {
    if (this.buf.length < 5) return null;
    const view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    const flags = view.getUint8(0);
    const len = view.getUint32(1, false);
    if (len > MAX_MESSAGE) throw new ApiError(0, "resource_exhausted", "a streamed message is larger than the console accepts");
    if (this.buf.length < 5 + len) return null;
    const data = this.buf.slice(5, 5 + len);
    this.buf = this.buf.slice(5 + len);
    return { flags, data };
  }
}

// watch streams ObservationService.Watch items to onItem (see serverStream).
export function watch(request, opts) {
  return serverStream(WATCH_PATH, request, opts);
}

// serverStream calls a Connect server-streaming procedure at path and passes each message to
// onItem until signal aborts or the stream ends; it resolves on a normal end and rejects with an
// ApiError otherwise. onOpen is called once the server has accepted.
export async function serverStream(path, request, { onItem, onOpen, signal }) {
  let resp;
  try {
    resp = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/connect+json", "Connect-Protocol-Version": "1", ...authHeaders() },
      body: envelope(request),
      cache: "no-store",
      credentials: "omit",
      signal,
    });
  } catch (e) {
    if (e.name === "AbortError") return;
    throw new ApiError(0, "unavailable", "the server cannot be reached: " + e.message);
  }
  if (!resp.ok) throw await errorFrom(resp);
  onOpen && onOpen();
  const reader = resp.body.getReader();
  const env = new EnvelopeReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new ApiError(0, "unavailable", "the stream ended without an end-of-stream message");
      env.push(value);
      for (let m = env.next(); m; m = env.next()) {
        if (m.flags & FLAG_COMPRESSED) throw new ApiError(0, "internal", "compressed message on the stream (the console asks for none)");
        const msg = JSON.parse(decoder.decode(m.data));
        if (m.flags & FLAG_END) {
          if (msg.error) throw new ApiError(200, msg.error.code || "unknown", msg.error.message || msg.error.code);
          return;
        }
        onItem(msg);
      }
    }
  } catch (e) {
    if (e.name === "AbortError" || (signal && signal.aborted)) return;
    throw e;
  } finally {
    reader.releaseLock && (() => { try { reader.releaseLock(); } catch { /* already released */ } })();
  }
}
