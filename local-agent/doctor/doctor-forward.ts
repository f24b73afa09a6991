// doctor's checks of forward targets (sources whose events go to a local app, not the gateway): which
// sources of the inbox forward, and, when the agent runs, how each app has been answering it — a target
// failing for more than a minute is a WARN naming it, since when, the last error and the fixes. Found
// the way `clawrelay status` finds the running agent (run.json beside the settings). Imported by
// doctor.ts; covered by test/node/forward-status.test.ts.
import type { RunningAgent } from "../cli/running-agent.ts";
import { failingText, span } from "../cli/cli-status.ts";
import type { ForwardTargetStatus } from "../forward/forward-targets.ts";
import type { InboxAccess } from "../relay/messages.ts";
import { listSources } from "../relay/sources.ts";
import type { AddCheck } from "./doctor-gateway.ts";

/** A target failing for longer than this is worth a WARN (the agent retries on its own before). */
export const FAILING_WARN_AFTER_MS = 60_000;
/** The running agent's status asks the relay too; doctor does not wait on it longer than this. */
const AGENT_WAIT_MS = 10_000;

/** One line per forwarding source the running agent has seen: OK, or WARN with the fixes once failing for a minute. */
export function forwardChecks(forwards: ForwardTargetStatus[], now: number, add: AddCheck): void {
  for (const f of forwards) {
    const last = f.last_answer ? `last answer ${f.last_answer.status} ${span(now - f.last_answer.at)} ago` : "no answer yet";
    const failing = failingText(f, now);
    if (f.failing_since !== null && now - f.failing_since > FAILING_WARN_AFTER_MS) {
      add(
        "WARN",
        `the app at ${f.target} (source ${f.source}) has been ${failing} — since ${new Date(f.failing_since).toISOString()}; last error: ${f.last_error ?? "none"}; ${last}. Its events wait at the relay`,
        `start the app at ${f.target}; or forward to where it listens: clawrelay sources set ${f.source} --forward URL; or send them to the gateway: clawrelay sources set ${f.source} --gateway`,
      );
    } else add("OK", `the running agent forwards source ${f.source} to ${f.target}: ${last}${failing ? `; ${failing}` : ""}`);
  }
}

/**
 * The inbox's forwarding sources (names → targets) and the running agent's view of their apps, the agent
 * as doctor found it (agent-presence.ts: standalone or the plugin's, looked for once per run). Returns the
 * names of the sources that forward, so the OpenClaw checks can say what is delivered without a gateway.
 */
export async function forwardingChecks(access: InboxAccess, running: Promise<RunningAgent | null>, add: AddCheck): Promise<string[]> {
  const sources = await listSources(access).catch(() => null);
  const forwarding = (sources ?? []).filter((s) => typeof s.forward === "string" && s.forward !== "");
  if (forwarding.length > 0) add("OK", `${forwarding.length} source(s) forward to local apps: ${forwarding.map((s) => `${s.name} → ${s.forward}`).join(", ")}`);
  const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), AGENT_WAIT_MS).unref());
  const found = await Promise.race([running.catch(() => null), timeout]);
  if (found?.running) forwardChecks(found.status.delivery.forwards ?? [], Date.now(), add);
  return forwarding.map((s) => s.name);
}
