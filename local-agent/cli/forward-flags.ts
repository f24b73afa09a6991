// Reading --forward and --allow-public-target (sources add, sources set, listen): the target checked as
// the relay checks it, and a host name resolved here, where the app runs, so a name that points at the
// internet is refused now rather than at the first event, and so is the agent's own local API port on
// this machine (forward/address-guard.ts). The agent checks both again before every post.
// And a source's forward policy (--timeout, --retries, --ordered/--unordered), checked against the
// limits the relay keeps (protocol/lanes.ts FORWARD_POLICY) before anything is sent.
// Covered by test/node/forward-cli.e2e.test.ts and source-policy.test.ts.
import { lookup } from "node:dns/promises";
import { FORWARD_POLICY, addressClass, checkForwardTarget } from "../../protocol/index.ts";
import { DEFAULT_API_PORT } from "../api/api-server.ts";
import { isThisMachine } from "../forward/address-guard.ts";
import { UsageError } from "./cli-args.ts";
import type { Values } from "./cli-args.ts";
import type { SourcePolicy, SourceTarget } from "../relay/sources.ts";

/**
 * A target the owner may set: its URL normalized; a host name must resolve to loopback or private
 * addresses unless allowPublic; never this machine at one of `apiPorts` (the agent's local API).
 */
export async function checkedTarget(value: string, allowPublic: boolean, flag = "--forward", apiPorts: readonly number[] = [DEFAULT_API_PORT]): Promise<SourceTarget> {
  const check = checkForwardTarget(value, allowPublic);
  if (!check.ok) throw new UsageError(`${flag}: ${check.problem}`);
  const url = new URL(check.url);
  const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
  const apiPort = apiPorts.includes(port);
  if (check.hostClass === null && (!allowPublic || apiPort)) {
    const found = await lookup(check.host, { all: true }).catch((err: Error) => {
      throw new UsageError(`${flag}: cannot resolve ${check.host} here (${err.message}); give the app's address, e.g. http://127.0.0.1:3000/webhooks`);
    });
    if (apiPort && found.some((a) => isThisMachine(a.address))) throw new UsageError(ownApiProblem(check.host, port));
    const outside = found.filter((a) => addressClass(a.address) === "public");
    if (outside.length > 0 && !allowPublic) {
      throw new UsageError(`${flag}: ${check.host} resolves to ${outside.map((a) => a.address).join(", ")}, a public address: targets are loopback or private addresses unless you add --allow-public-target`);
    }
  }
  if (apiPort && check.hostClass !== null && isThisMachine(check.host)) throw new UsageError(ownApiProblem(check.host, port));
  return { forward: check.url, allowPublic };
}

/** Said whichever flag made the target (listen's PORT, --forward). */
function ownApiProblem(host: string, port: number): string {
  return `${host}:${port} is the clawrelay agent's own local API (status, messages, retry and the inspector), never a forward target: anyone holding the source's URL could act on the inbox through it. Give your app's own port, e.g. http://127.0.0.1:3000/webhooks`;
}

/** A whole number within [min, max] from `--flag VALUE`, or undefined when the flag is not given. */
function boundedWhole(values: Values, flag: string, min: number, max: number, what: string): number | undefined {
  const value = values[flag];
  if (typeof value !== "string") return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw new UsageError(`--${flag} must be ${what} from ${min} to ${max}, not "${value}"`);
  return n;
}

/** --timeout, --retries, --ordered / --unordered as the relay's fields; undefined when none is given. */
export function policyFlags(values: Values): SourcePolicy | undefined {
  if (values.ordered === true && values.unordered === true) throw new UsageError("--ordered and --unordered contradict each other: give one");
  const timeoutSec = boundedWhole(values, "timeout", 1, FORWARD_POLICY.timeoutSecMax, "a whole number of seconds");
  const retries = boundedWhole(values, "retries", 0, FORWARD_POLICY.retriesMax, "a whole number of retries");
  const ordered = values.ordered === true ? true : values.unordered === true ? false : undefined;
  if (timeoutSec === undefined && retries === undefined && ordered === undefined) return undefined;
  return { ...(timeoutSec !== undefined ? { timeout_sec: timeoutSec } : {}), ...(retries !== undefined ? { retries } : {}), ...(ordered !== undefined ? { ordered } : {}) };
}
