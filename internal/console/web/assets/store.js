// The live store: one Watch stream for the whole console, the newest items (bounded), counters
// and per-second rates for the chart. Pages subscribe to it; the stream reconnects by itself.

import { watch } from "./watch.js";
import { getJSON } from "./api.js";
import { itemKey, verdict } from "./format.js";

export const MAX_ITEMS = 2000;
export const RATE_SECONDS = 300;
const HEARTBEAT_MS = 60000;
// WatchRequest.flush_interval_ms of the Live stream (see loop).
export const WATCH_FLUSH_INTERVAL_MS = 250;

class Store {
  constructor() {
    this.items = []; // newest first
    this.keys = new Set();
    this.state = "idle"; // idle | connecting | live | down | refused
    this.error = null;
    this.counts = { received: 0, decisions: 0, denies: 0, observations: 0, synthetic: 0 };
    this.rates = new Map(); // epoch second -> {d, deny}
    this.listeners = new Set();
    this.abort = null;
    this.retry = 0;
    this.onRefused = null;
    this.skewMs = 0; // server clock minus this browser's, so that rates use the server's seconds
  }

  // nowSec is the current second by the server's clock.
  nowSec() { return Math.floor((Date.now() + this.skewMs) / 1000); }

  subscribe(fn) { this.listeners.add(fn); return () => this.listeners.delete(fn); }
  emit(what) { for (const fn of this.listeners) fn(what); }

  // start begins the backfill and the stream (once).
  start() {
    if (this.abort) return;
    this.abort = new AbortController();
    this.loop(this.abort.signal);
    // The server records recent items and sessions while a console asks it something now and
    // then; this also notices a token revoked while the page is open.
    const signal = this.abort.signal;
    this.heartbeat = setInterval(() => {
      getJSON("api/info", { signal }).catch((e) => {
        if ((e.unauthenticated || e.forbidden) && this.onRefused) { this.stop(); this.onRefused(e); }
      });
    }, HEARTBEAT_MS);
  }

  stop() {
    if (this.abort) this.abort.abort();
    this.abort = null;
    clearInterval(this.heartbeat);
    this.setState("idle");
  }

  reset() {
    this.stop();
    this.items = [];
    this.keys.clear();
    this.rates.clear();
    for (const k of Object.keys(this.counts)) this.counts[k] = 0;
    this.emit("items");
  }

  setState(s, err) {
    this.state = s;
    this.error = err || null;
    this.emit("state");
  }

  async loop(signal) {
    while (!signal.aborted) {
      this.setState("connecting");
      try {
        await this.backfill(signal);
        // A person reads this page: a few updates a second are plenty, and under load the
        // server then writes one batch per 250 ms instead of one per decision (an item after a
        // quiet spell still comes at once).
        await watch({ flushIntervalMs: WATCH_FLUSH_INTERVAL_MS }, {
          signal,
          onOpen: () => { this.retry = 0; this.setState("live"); },
          onItem: (it) => this.add(it, true),
        });
        if (signal.aborted) return;
        // A normal end (the server's stream limit): reconnect at once.
      } catch (e) {
        if (signal.aborted) return;
        if (e.unauthenticated || e.forbidden) {
          this.setState("refused", e);
          this.abort = null;
          clearInterval(this.heartbeat);
          if (this.onRefused) this.onRefused(e);
          return;
        }
        this.setState("down", e);
        this.retry = Math.min(this.retry + 1, 6);
        await new Promise((r) => setTimeout(r, 500 * 2 ** this.retry));
      }
    }
  }

  // backfill loads the items the server remembers, so the page is not empty after a reload.
  async backfill(signal) {
    const r = await getJSON("api/recent?limit=500", { signal });
    const items = (r.items || []).map((x) => x.item).reverse(); // oldest first
    for (const it of items) this.add(it, false);
  }

  add(item, live) {
    const key = itemKey(item);
    if (this.keys.has(key)) return;
    this.keys.add(key);
    this.items.unshift(item);
    if (this.items.length > MAX_ITEMS) {
      const old = this.items.pop();
      this.keys.delete(itemKey(old));
    }
    const v = verdict(item);
    this.counts.received++;
    if (item.decision) {
      this.counts.decisions++;
      if (v === "deny") this.counts.denies++;
      if (item.decision.synthetic) this.counts.synthetic++;
    } else {
      this.counts.observations++;
    }
    if (item.decision) {
      const sec = Math.floor(new Date(item.time).getTime() / 1000);
      const cutoff = this.nowSec() - RATE_SECONDS;
      if (sec > cutoff) {
        const b = this.rates.get(sec) || { d: 0, deny: 0 };
        b.d++;
        if (v === "deny") b.deny++;
        this.rates.set(sec, b);
      }
      if (this.rates.size > RATE_SECONDS + 60) {
        for (const s of this.rates.keys()) if (s <= cutoff) this.rates.delete(s);
      }
    }
    this.emit(live ? "item" : "items");
  }

  find(decisionId) {
    return this.items.find((it) => it.decision && it.decision.decisionId === decisionId);
  }
}

export const store = new Store();
