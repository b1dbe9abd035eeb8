// Smoke test of the packed @ahp-gateway/client, run by scripts/test-clients.sh from an empty project
// that installed the tarball: it is type-checked against the package's declarations, then run with
// node against the server at AHP_SERVER_URL. Exits non-zero on the first failure.

import { inspect } from "node:util";
import { Code, ConnectError, createAhpClient, readDecision, toolEvent, EventType, ToolKind, Verdict } from "@ahp-gateway/client";
import { createAhpClient as createWebClient } from "@ahp-gateway/client/web";

function check(ok: boolean, what: string): void {
  if (!ok) {
    throw new Error(`smoke: ${what}`);
  }
  console.log(`ok - ${what}`);
}

const baseUrl = process.env.AHP_SERVER_URL ?? "";
check(baseUrl !== "", "AHP_SERVER_URL is set");
const sessionId = `smoke-ts-${crypto.randomUUID()}`;
const source = "urn:ahp:clients:typescript-smoke";
const ahp = createAhpClient({ baseUrl, protocol: "grpc" });
try {
  const watch = await ahp.watch({ sessionId }, { timeoutMs: 10_000 });

  const denied = readDecision(
    await ahp.decide({ name: "Bash", kind: ToolKind.SHELL, input: { command: "rm -rf /" }, sessionId, source }, { timeoutMs: 5_000 }),
  );
  check(!denied.allowed && denied.verdict === Verdict.DENY, "rm -rf / is denied");
  check(denied.ruleId === "deny-rm-rf-root" && denied.code !== "" && denied.reason !== "", "the denial names its rule, code and reason");

  const allowed = readDecision(await ahp.decide({ name: "Bash", kind: ToolKind.SHELL, input: { command: "ls" }, sessionId, source }));
  check(allowed.allowed && allowed.decisionId !== "", "ls is allowed");

  const observed = await ahp.observe(toolEvent({ name: "Bash", kind: ToolKind.SHELL, type: EventType.TOOL_AFTER, sessionId, source }));
  check(!observed.duplicate, "a tool.after is recorded");

  const seen: string[] = [];
  for await (const item of watch) {
    seen.push(item.decision ? `decision:${Verdict[item.decision.verdict]}` : `observation:${EventType[item.event?.type ?? 0]}`);
    if (seen.length === 3) break;
  }
  watch.close();
  check(seen.join(",") === "decision:DENY,decision:ALLOW,observation:TOOL_AFTER", `the watch saw its session (${seen.join(",")})`);

  try {
    await ahp.decide(toolEvent({ name: "Bash", id: "" }));
    check(false, "an event without an id is refused");
  } catch (err) {
    const e = ConnectError.from(err);
    check(e.code === Code.InvalidArgument && e.rawMessage.includes("event.id"), `an invalid event is ConnectError invalid_argument (${e.rawMessage})`);
  }
} finally {
  ahp.close();
}

// A credential never shows in the client or in an error (here: nothing listens on port 9).
const secret = `smoke-secret-${crypto.randomUUID()}`;
const unreachable = createAhpClient({ baseUrl: "http://127.0.0.1:9", token: secret });
try {
  await unreachable.decide({ name: "Bash" }, { timeoutMs: 2_000 });
  check(false, "an unreachable server fails the call");
} catch (err) {
  const e = ConnectError.from(err);
  check(e.code === Code.Unavailable || e.code === Code.Unknown || e.code === Code.DeadlineExceeded, `an unreachable server is a ConnectError (${Code[e.code]})`);
  check(![inspect(err, { depth: 8 }), String(err), JSON.stringify(e)].some((s) => s.includes(secret)), "the error does not show the token");
} finally {
  unreachable.close();
}
check(!inspect(unreachable, { depth: 8, showHidden: true }).includes(secret), "the client object does not show the token");

// A server that requires credentials (scripts/test-clients.sh starts one): the token is sent on
// unary and streaming calls, a refusal keeps its Connect code, and no error shows a token.
const authUrl = process.env.AHP_TEST_AUTH_URL ?? "";
const agentToken = process.env.AHP_TEST_AGENT_TOKEN ?? "";
const watchToken = process.env.AHP_TEST_WATCH_TOKEN ?? "";
check(authUrl !== "" && agentToken !== "" && watchToken !== "", "AHP_TEST_AUTH_URL and its tokens are set");
async function codeOf(call: () => Promise<unknown>): Promise<ConnectError | undefined> {
  try {
    await call();
    return undefined;
  } catch (err) {
    return ConnectError.from(err);
  }
}
for (const protocol of ["connect", "grpc", "grpc-web"] as const) {
  const agent = createAhpClient({ baseUrl: authUrl, protocol, token: agentToken });
  const watcher = createAhpClient({ baseUrl: authUrl, protocol, token: watchToken });
  const nobody = createAhpClient({ baseUrl: authUrl, protocol });
  const wrongToken = `wrong-${crypto.randomUUID()}`;
  const wrong = createAhpClient({ baseUrl: authUrl, protocol, apiKey: wrongToken });
  try {
    const sid = `smoke-ts-auth-${crypto.randomUUID()}`;
    const watch = await watcher.watch({ sessionId: sid }, { timeoutMs: 10_000 });
    check(readDecision(await agent.decide({ name: "Bash", input: { command: "ls" }, sessionId: sid, source })).allowed, `${protocol}: a bearer token with the agent scope gets a decision`);
    const first = await watch.next();
    watch.close();
    check(first.value?.event?.session?.id === sid, `${protocol}: a token with the watch scope watches`);
    const none = await codeOf(() => nobody.decide({ name: "Bash", source }));
    check(none?.code === Code.Unauthenticated, `${protocol}: no credential is unauthenticated (${none?.rawMessage})`);
    const bad = await codeOf(() => wrong.decide({ name: "Bash", source }));
    check(bad?.code === Code.Unauthenticated && !inspect(bad, { depth: 8 }).includes(wrongToken), `${protocol}: a wrong API key is unauthenticated, and the error does not show it`);
    const denied = await codeOf(async () => {
      const w = await agent.watch({ sessionId: sid }, { timeoutMs: 5_000 });
      await w.next();
    });
    check(denied?.code === Code.PermissionDenied && !inspect(denied, { depth: 8 }).includes(agentToken), `${protocol}: Watch with an agent-only token is permission_denied (${denied?.rawMessage})`);
  } finally {
    for (const c of [agent, watcher, nobody, wrong]) c.close();
  }
}

// The browser entry point over Node's fetch (Connect protocol, JSON).
const web = createWebClient({ baseUrl, json: true });
check(readDecision(await web.decide({ name: "Read", kind: ToolKind.FILE_READ, input: { path: "README.md" }, source })).allowed, "the web client (fetch) gets a decision");
console.log("smoke: @ahp-gateway/client passed");
