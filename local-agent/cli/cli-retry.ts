// `clawrelay retry`: after a fix, no waiting out the 60 s a config error waits (or a 429's hold, an outage's
// next probe, a relay reconnect's back-off). Asks the running agent (found as `status` finds it, standalone or the plugin's)
// to cut every wait short — POST /clawrelay/retry — prints what it woke, then watches its status for a
// moment to say whether delivery goes on. cli.ts loads it; covered by test/node/retry-now.e2e.test.ts.
import type { AgentStatusAnswer } from "../agent-status.ts";
import type { RetryNow } from "../delivery/delivery-status.ts";
import { AgentError } from "../errors.ts";
import type { RunningAgent } from "./running-agent.ts";

export type RetryAnswer = RetryNow & { relay_reconnect: boolean };

/** How long the command watches the agent's status for the woken messages' outcome. */
const WATCH_MS = 3_000;

export function wokeText(woke: RetryAnswer): string {
  const parts = [
    woke.woken > 0 ? `woke ${woke.woken} waiting ${woke.woken === 1 ? "retry" : "retries"}` : "no message was waiting to retry",
    ...(woke.hold_cut_ms > 0 ? [`cut the gateway's 429 hold short (${Math.ceil(woke.hold_cut_ms / 1000)} s left)`] : []),
    ...(woke.probe_now ? ["probed the down gateway now"] : []),
    ...(woke.relay_reconnect ? ["reconnected to the relay now"] : []),
  ];
  return parts.join("; ");
}

/** `found`: the inbox's running agent (doctor/agent-presence.ts runningAgentOf), or why none runs. */
export async function retryCommand(found: RunningAgent, json: boolean): Promise<string> {
  if (!found.running) throw new AgentError("not_running", `${found.why}; nothing to retry (clawrelay start)`);
  const base = `http://127.0.0.1:${found.apiPort}`;
  const res = await fetch(`${base}/clawrelay/retry`, { method: "POST" }).catch(() => null);
  if (!res?.ok) throw new AgentError("retry_failed", `the agent (pid ${found.pid}) did not take the retry (${res ? `HTTP ${res.status}` : "no answer"}); is it older than this CLI? Restart it`);
  const woke = (await res.json()) as RetryAnswer;
  if (json) return JSON.stringify(woke, null, 2);
  const lines = [wokeText(woke)];
  if (woke.paused) {
    // The paused message posts at once: its answer says whether the fix took.
    const before = found.status.delivery.delivered;
    let now: AgentStatusAnswer = found.status;
    for (const until = Date.now() + WATCH_MS; Date.now() < until; await new Promise((r) => setTimeout(r, 200))) {
      now = (await (await fetch(`${base}/clawrelay/status`)).json()) as AgentStatusAnswer;
      if (now.delivery.paused === null) break;
    }
    lines.push(now.delivery.paused === null ? `the pause is over: delivery goes on (${now.delivery.delivered - before} delivered since)` : `still PAUSED: ${now.delivery.paused}`);
  }
  return lines.join("\n");
}
