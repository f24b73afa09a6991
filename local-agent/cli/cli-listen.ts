// `clawrelay listen PORT`: the quick form of a forward target, like `ngrok http 3000`. It makes (or
// reuses) a token source whose every request — any sub-path and query under its URL — is forwarded to
// http://127.0.0.1:PORT, and prints that URL. A token source's URL holds its secret, which the relay
// keeps only as a hash, so the URL is kept here (listen.json, 0600) to print it again next time; a
// source made elsewhere gets a new secret (said). The source answers live (docs/live.md: the app's answer
// goes back to the sender while the agent runs) unless --no-live, on a relay that reports live answers
// (an older one refuses the field: it is set only once the relay's source view names it). cli.ts then runs
// the agent unless one runs. Covered by test/node/forward-cli.e2e.test.ts and live-cli.e2e.test.ts.
import { chmod, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AgentError } from "../errors.ts";
import { UsageError } from "./cli-args.ts";
import { checkedTarget } from "./forward-flags.ts";
import type { InboxAccess } from "../relay/messages.ts";
import { LIVE } from "../../protocol/index.ts";
import type { SourceView } from "../../protocol/index.ts";
import { addSource, changeSource, listSources, rotateSource } from "../relay/sources.ts";
import type { SourceAnswer, SourceTarget } from "../relay/sources.ts";

export interface ListenInput {
  port: string;
  path: string | undefined;
  host: string | undefined;
  name: string | undefined;
  allowPublic: boolean;
  /** Answer live (the default); false: --no-live. */
  live: boolean;
}

export interface ListenResult {
  name: string;
  /** The public URL to give senders (it holds the token source's secret). */
  url: string;
  target: string;
  /** made: a new source; reused: the URL kept here; renewed: the source existed, its URL was not known here, so it got a new secret. */
  how: "made" | "reused" | "renewed";
  /** The source's live deadline (s); null: not live; undefined: the relay reports no live answers (an older relay). */
  live_sec?: number | null;
}

/** What listen.json keeps: per relay, agent and source name, the URL with its secret. */
type Kept = Record<string, string>;

function keptKey(access: InboxAccess, name: string): string {
  return `${access.relayUrl.replace(/\/+$/, "")} ${access.agentId} ${name}`;
}

async function readKept(file: string): Promise<Kept> {
  try {
    const value: unknown = JSON.parse(await readFile(file, "utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Kept) : {};
  } catch {
    return {};
  }
}

async function writeKept(file: string, kept: Kept): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(kept, null, 2) + "\n", { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, file);
}

/** The target `listen` forwards to: http://HOST:PORT[/PREFIX]. */
export async function listenTarget(input: ListenInput): Promise<SourceTarget> {
  if (!/^\d{1,5}$/.test(input.port) || Number(input.port) < 1 || Number(input.port) > 65535) throw new UsageError(`listen needs the app's port, 1-65535 (not "${input.port}"): clawrelay listen 3000`);
  const prefix = input.path === undefined ? "" : input.path.startsWith("/") ? input.path : `/${input.path}`;
  if (/[?#\s]/.test(prefix)) throw new UsageError(`--path is a path such as /webhooks, without a query, fragment or spaces (not "${input.path}")`);
  const host = input.host ?? "127.0.0.1";
  const hostPart = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return checkedTarget(`http://${hostPart}:${input.port}${prefix.replace(/\/+$/, "")}`, input.allowPublic, input.host ? "--host" : "--path");
}

/** `target`: listenTarget(input), read before the settings so a mistyped port is said first. */
export async function listen(access: InboxAccess, home: string, input: ListenInput, target: SourceTarget): Promise<ListenResult> {
  const name = input.name ?? `listen-${input.port}`;
  const file = join(home, "listen.json");
  const kept = await readKept(file);
  const key = keptKey(access, name);
  const existing = (await listSources(access)).find((s) => s.name === name);
  let answer: SourceAnswer | null = null;
  let how: ListenResult["how"];
  if (!existing) {
    answer = await addSource(access, { name, kind: "token", target });
    how = "made";
  } else if (existing.kind !== "token") {
    throw new AgentError("source_exists", `the inbox's source "${name}" is a ${existing.kind} source; listen makes token sources: give another --name, or forward that one with clawrelay sources set ${name} --forward ${target.forward}`);
  } else {
    if (existing.forward !== target.forward || existing.allow_public_target !== target.allowPublic) await changeSource(access, name, { target });
    if (kept[key]) {
      how = "reused";
    } else {
      answer = await rotateSource(access, name, {});
      how = "renewed";
    }
  }
  if (answer) {
    kept[key] = answer.post_url;
    await writeKept(file, kept);
  }
  const liveSec = await settleLive(access, name, answer?.source ?? existing!, input.live);
  return { name, url: kept[key]!, target: target.forward!, how, ...(liveSec !== undefined ? { live_sec: liveSec } : {}) };
}

/** Makes the source live (keeping a deadline it has) or not, as asked; undefined when the relay reports no live answers. */
async function settleLive(access: InboxAccess, name: string, view: SourceView, live: boolean): Promise<number | null | undefined> {
  if (view.live_sec === undefined) return undefined;
  const wanted = live ? (view.live_sec ?? LIVE.deadlineSec) : null;
  if (wanted === view.live_sec) return wanted;
  return (await changeSource(access, name, { liveSec: wanted })).source.live_sec;
}

export function listenText(result: ListenResult): string {
  const lines = [`Forwarding ${result.url}`, `        →  ${result.target}`, ""];
  if (result.how === "renewed") lines.push(`The source "${result.name}" was made elsewhere and its URL is not kept here, so it got a new one: the old URL stops working.`, "");
  lines.push(
    "Every request sent under that URL goes to the app with its method, body and headers, its sub-path and query kept:",
    `  ${result.url}/stripe/events?x=1  →  ${result.target.replace(/\/$/, "")}/stripe/events?x=1`,
    "Requests wait at the relay while this machine or the app is down, and go once it is back; the app's",
    "2xx acknowledges one, 408/429/5xx retry, any other 4xx puts it on the dead shelf (clawrelay messages).",
    "",
    `Try it:  curl -X POST '${result.url}/hello?x=1' -H 'content-type: application/json' -d '{"hello":"world"}'`,
  );
  if (typeof result.live_sec === "number") {
    lines.push(
      "",
      `Live: while the agent runs, each request waits up to ${result.live_sec} s for the app's answer, which goes back to the sender (GET callbacks too);`,
      "offline or late, a POST is held (header x-clawrelay-held) and delivered later, a GET gets 503/504. --no-live turns it off.",
    );
  }
  return lines.join("\n");
}
