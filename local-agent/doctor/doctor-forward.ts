// doctor's checks of forward targets (sources whose events go to a local app, not the gateway): which
// sources of the inbox forward, and, when the agent runs, how each app has been answering it — a target
// failing for more than a minute is a WARN naming it, since when, the last error and the fixes; a head
// event the app keeps failing, how many of its source's retries it has spent and when it goes to the dead
// shelf. Found the way `clawrelay status` finds the running agent (run.json beside the settings).
// Imported by doctor.ts; covered by test/node/forward-status.test.ts.
import { FORWARD_POLICY } from "../../protocol/index.ts";
import type { RunningAgent } from "../cli/running-agent.ts";
import { failingText, span } from "../cli/cli-status.ts";
import type { ReportedTarget } from "../cli/cli-status.ts";
import type { InboxAccess } from "../relay/messages.ts";
import { listSources } from "../relay/sources.ts";
import type { AddCheck } from "./doctor-gateway.ts";

/** A target failing for longer than this is worth a WARN (the agent retries on its own before). */
export const FAILING_WARN_AFTER_MS = 60_000;
/** The running agent's status asks the relay too; doctor does not wait on it longer than this. */
const AGENT_WAIT_MS = 10_000;

/**
 * While the app fails its head event (answers 5xx, times out): the retries it has spent of its source's
 * budget and when it goes to the dead shelf — at the first failure past the budget. `retries` is the
 * agent's word for the budget, else the relay's; null when neither said it.
 */
function headText(f: ReportedTarget, retries: number | null, now: number): string | null {
  const spent = f.head_failures ?? 0;
  if (spent === 0) return null;
  const next = f.next_try_at ?? null;
  const when = next === null ? "" : next > now ? `; its next try is in ${span(next - now)}` : "; it is tried again now";
  if (retries === null) return `its head event has failed ${spent} time(s)${when}`;
  const left = Math.max(1, retries - spent + 1);
  return `its head event has spent ${Math.min(spent, retries)} of its ${retries} retries: ${left === 1 ? "one more failure puts" : `${left} more failures put`} it on the dead shelf (clawrelay messages --state dead) and the next event goes on${when}`;
}

/**
 * One line per forwarding source the running agent has seen: OK, or WARN with the fixes once failing for
 * a minute. `retries`: each source's budget as the relay lists it (FORWARD_POLICY's from an older relay).
 */
export function forwardChecks(forwards: ReportedTarget[], now: number, add: AddCheck, retries: ReadonlyMap<string, number> = new Map()): void {
  for (const f of forwards) {
    const last = f.last_answer ? `last answer ${f.last_answer.status} ${span(now - f.last_answer.at)} ago` : "no answer yet";
    const failing = failingText(f, now);
    const head = headText(f, f.retries ?? retries.get(f.source) ?? null, now);
    if (f.failing_since !== null && now - f.failing_since > FAILING_WARN_AFTER_MS) {
      add(
        "WARN",
        `the app at ${f.target} (source ${f.source}) has been ${failing} — since ${new Date(f.failing_since).toISOString()}; last error: ${f.last_error ?? "none"}; ${last}. ${head ? `${head[0]!.toUpperCase()}${head.slice(1)}` : "Its events wait at the relay"}`,
        `start the app at ${f.target}; or forward to where it listens: clawrelay sources set ${f.source} --forward URL; or send them to the gateway: clawrelay sources set ${f.source} --gateway`,
      );
    } else add("OK", `the running agent forwards source ${f.source} to ${f.target}: ${last}${failing ? `; ${failing}` : ""}${head ? `; ${head}` : ""}`);
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
  // A relay that lists no budget (one from before lanes) sends none with its events: the agent uses FORWARD_POLICY's.
  const retries = new Map(forwarding.map((s) => [s.name, s.retries ?? FORWARD_POLICY.retries]));
  if (found?.running) forwardChecks(found.status.delivery.forwards ?? [], Date.now(), add, retries);
  return forwarding.map((s) => s.name);
}
