// The `clawrelay sources` commands: flags to a call of sources.ts, its answer to text (or JSON). cli.ts
// hands over the parsed flags, the inbox and how to read a secret from stdin, and prints what this
// returns. Covered by test/node/sources.e2e.test.ts and source-policy.test.ts.
import { UsageError } from "./cli-args.ts";
import type { Values } from "./cli-args.ts";
import type { InboxAccess } from "../relay/messages.ts";
import { LIVE, SOURCE_KINDS } from "../../protocol/index.ts";
import type { SourceKind } from "../../protocol/index.ts";
import { addSource, changeSource, listSources, policyKeptText, removeSource, rotateSource, sourceAddedText, sourceSetText, sourcesTable } from "../relay/sources.ts";
import { liveSetText } from "../relay/source-live.ts";
import type { SourceTarget } from "../relay/sources.ts";
import { checkedTarget, policyFlags } from "./forward-flags.ts";

export type SourcesAction = "add" | "set" | "list" | "rotate" | "remove";

export interface SourcesCommand {
  action: SourcesAction;
  /** The NAME argument (list takes none). */
  name: string | undefined;
  values: Values;
  access(): Promise<InboxAccess>;
  /** --secret, or the line on stdin for "--secret -". */
  readSecret(): Promise<string | undefined>;
}

const text = (values: Values, name: string): string | undefined => (typeof values[name] === "string" ? (values[name] as string) : undefined);

/** --forward URL [--allow-public-target], or for `set` --gateway; undefined when none is given. */
async function targetOf(values: Values): Promise<SourceTarget | undefined> {
  const forward = text(values, "forward");
  const allowPublic = values["allow-public-target"] === true;
  if (values.gateway === true) {
    if (forward !== undefined) throw new UsageError("--forward and --gateway contradict each other: give one");
    return { forward: null, allowPublic: false };
  }
  if (forward === undefined) {
    if (allowPublic) throw new UsageError("--allow-public-target goes with --forward URL");
    return undefined;
  }
  return checkedTarget(forward, allowPublic);
}

/** --live[=SECONDS] as the relay's live_sec (a bare --live: the default deadline), --no-live as null; undefined when neither is given. */
export function liveFlag(values: Values): number | null | undefined {
  const live = values.live;
  if (typeof live === "string" && values["no-live"] === true) throw new UsageError("--live and --no-live contradict each other: give one");
  if (values["no-live"] === true) return null;
  if (typeof live !== "string") return undefined;
  if (live === "") return LIVE.deadlineSec;
  const n = Number(live);
  if (!/^\d+$/.test(live) || n < 1 || n > LIVE.deadlineSecMax) throw new UsageError(`--live takes the seconds the relay waits for the app's answer, 1-${LIVE.deadlineSecMax} (--live=${LIVE.deadlineSec}), not "${live}"`);
  return n;
}

function nameOf(command: SourcesCommand): string {
  if (command.name === undefined) throw new UsageError(`sources ${command.action} needs the source's name: clawrelay sources ${command.action} NAME`);
  return command.name;
}

export async function runSourcesCommand(command: SourcesCommand): Promise<string> {
  const { values } = command;
  const asJson = values.json === true;
  if (command.action === "list") {
    const sources = await listSources(await command.access());
    return asJson ? JSON.stringify(sources, null, 2) : sourcesTable(sources, Date.now());
  }
  const name = nameOf(command);
  if (command.action === "remove") {
    const answer = await removeSource(await command.access(), name);
    return asJson ? JSON.stringify(answer) : `source "${answer.removed}" removed; events it already delivered stay in the inbox (clawrelay messages)`;
  }
  if (command.action === "add") {
    const kind = text(values, "kind");
    if (kind === undefined) throw new UsageError(`sources add needs --kind: one of ${SOURCE_KINDS.join(", ")}`);
    if (!(SOURCE_KINDS as readonly string[]).includes(kind)) throw new UsageError(`--kind must be one of ${SOURCE_KINDS.join(", ")}, not "${kind}"`);
    const target = await targetOf(values);
    const policy = policyFlags(values);
    const live = liveFlag(values);
    const secret = await command.readSecret();
    const subpath = text(values, "subpath");
    const answer = await addSource(await command.access(), {
      name,
      kind: kind as SourceKind,
      ...(secret !== undefined ? { secret } : {}),
      ...(subpath !== undefined ? { subpath } : {}),
      ...(target ? { target } : {}),
      ...(policy ? { policy } : {}),
      ...(live !== undefined ? { liveSec: live } : {}),
    });
    if (asJson) return JSON.stringify(answer, null, 2);
    return `${sourceAddedText(answer, "added")}${policy && answer.source.forward === null ? `\n${policyKeptText(answer.source)}` : ""}`;
  }
  if (command.action === "set") {
    const target = await targetOf(values);
    const policy = policyFlags(values);
    const live = liveFlag(values);
    if (!target && !policy && live === undefined) throw new UsageError("sources set needs --forward URL (a local app) or --gateway, or how its events are posted: --timeout SECONDS, --retries N, --ordered or --unordered, --live[=SECONDS] or --no-live");
    const answer = await changeSource(await command.access(), name, { ...(target ? { target } : {}), ...(policy ? { policy } : {}), ...(live !== undefined ? { liveSec: live } : {}) });
    if (asJson) return JSON.stringify(answer, null, 2);
    const changed = sourceSetText(answer, { target: target !== undefined, policy: policy !== undefined });
    return live === undefined ? changed : [changed, liveSetText(answer.source, live)].filter((line) => line !== "").join("\n");
  }
  const grace = text(values, "grace");
  if (grace !== undefined && !/^\d+$/.test(grace)) throw new UsageError(`--grace must be a whole number of seconds, not "${grace}"`);
  const secret = await command.readSecret();
  const answer = await rotateSource(await command.access(), name, { ...(secret !== undefined ? { secret } : {}), ...(grace ? { graceSec: Number(grace) } : {}) });
  return asJson ? JSON.stringify(answer, null, 2) : sourceAddedText(answer, "rotated");
}
