// Reading --forward and --allow-public-target (sources add, sources set, listen): the target checked as
// the relay checks it, and a host name resolved here, where the app runs, so a name that points at the
// internet is refused now rather than at the first event. The agent checks again before every post.
// Covered by test/node/forward-cli.e2e.test.ts.
import { lookup } from "node:dns/promises";
import { addressClass, checkForwardTarget } from "../../protocol/index.ts";
import { UsageError } from "./cli-args.ts";
import type { SourceTarget } from "../relay/sources.ts";

/** A target the owner may set: its URL normalized; a host name must resolve to loopback or private addresses unless allowPublic. */
export async function checkedTarget(value: string, allowPublic: boolean, flag = "--forward"): Promise<SourceTarget> {
  const check = checkForwardTarget(value, allowPublic);
  if (!check.ok) throw new UsageError(`${flag}: ${check.problem}`);
  if (check.hostClass === null && !allowPublic) {
    const found = await lookup(check.host, { all: true }).catch((err: Error) => {
      throw new UsageError(`${flag}: cannot resolve ${check.host} here (${err.message}); give the app's address, e.g. http://127.0.0.1:3000/webhooks`);
    });
    const outside = found.filter((a) => addressClass(a.address) === "public");
    if (outside.length > 0) {
      throw new UsageError(`${flag}: ${check.host} resolves to ${outside.map((a) => a.address).join(", ")}, a public address: targets are loopback or private addresses unless you add --allow-public-target`);
    }
  }
  return { forward: check.url, allowPublic };
}
