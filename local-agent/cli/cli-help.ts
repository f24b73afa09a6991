// The CLI's command table: for each command its flags (the only options parseArgs is given for it),
// its usage lines, its help text and examples. Pure data and text; imported by cli-args.ts and
// cli-errors.ts, covered by test/node/cli-usage.e2e.test.ts. The sources commands and listen are in cli-help-sources.ts,
// messages in cli-help-messages.ts.
import { A2A_COMMANDS, A2A_GROUP } from "./cli-help-a2a.ts";
import { MESSAGES_COMMAND } from "./cli-help-messages.ts";
import { MCP_COMMANDS } from "./cli-help-mcp.ts";
import { SOURCE_COMMANDS } from "./cli-help-sources.ts";
import { json } from "./cli-spec.ts";
import type { CommandSpec, FlagSpec, GroupSpec, HelpTopic } from "./cli-spec.ts";

export type { CommandSpec, FlagSpec, GroupSpec, HelpTopic } from "./cli-spec.ts";

export const GLOBAL_FLAGS: FlagSpec[] = [
  { name: "home", value: "DIR", about: "settings directory (default $CLAWRELAY_HOME or ~/.clawrelay)" },
  { name: "debug", about: "print the stack trace of an unexpected error" },
  { name: "help", short: "h", about: "this help" },
];

const GATEWAY_FLAGS: FlagSpec[] = [
  { name: "gateway-port", value: "N", about: "the OpenClaw gateway's port, instead of openclaw.json's gateway.port" },
  { name: "hooks-path", value: "PATH", about: "the gateway's hooks path, instead of openclaw.json's hooks.path" },
  { name: "openclaw-config", value: "FILE", about: "the openclaw.json to read (default: OpenClaw's own lookup)" },
];

const claimToken: FlagSpec = { name: "claim-token", value: "TOKEN", about: "the relay operator's claim token, for a first claim (or $CLAWRELAY_CLAIM_TOKEN)" };
const agentlineToken: FlagSpec = { name: "agentline-token", value: "JWT", about: "a hub JWT to try after the relay's and the credentials file's, before one is made from the agent's key" };

export const COMMANDS: CommandSpec[] = [
  {
    kind: "command",
    name: "init",
    summary: "claim this agent's inbox on a relay and save its settings",
    usage: [
      "init --relay URL [--name NAME] [--hub URL] [--import-botcord [--botcord-id ID] | --import-agentline [--agentline-id ID]] [--force] [--rotate-token] [--claim-token TOKEN]",
    ],
    flags: [
      { name: "relay", value: "URL", about: "the relay to claim the inbox on, e.g. https://relay.example.com (needed the first time)" },
      { name: "name", value: "NAME", about: "the agent's display name" },
      { name: "hub", value: "URL", about: "the hub (default: $BOTCORD_HUB or $AGENTLINE_HUB, the imported identity's, or https://agentgram.chat)" },
      { name: "import-botcord", about: "keep your BotCord ag_ id: use the key in ~/.botcord/credentials, and keep that file on the relay's hub token" },
      { name: "botcord-id", value: "ID", about: "which BotCord identity to import (default $BOTCORD_AGENT_ID, then ~/.botcord/default.json's)" },
      { name: "import-agentline", about: "keep your Agentline ag_ id: use the key in ~/.agentline/credentials, and keep that file on the relay's hub token" },
      { name: "agentline-id", value: "ID", about: "which Agentline identity to import when there are several" },
      { name: "force", about: "replace the identity in existing settings (a new key, or the imported one)" },
      { name: "rotate-token", about: "have the relay mint a new webhook token (the old one stops working)" },
      claimToken,
    ],
    positionals: 0,
    examples: [
      "clawrelay init --relay https://relay.example.com --name Alice",
      "clawrelay init --relay https://relay.example.com --import-botcord",
      "clawrelay init --relay https://relay.example.com --import-agentline",
      "clawrelay init --rotate-token",
    ],
  },
  {
    kind: "command",
    name: "start",
    summary: "run the local agent: relay inbox → OpenClaw gateway, receipts, the local API",
    usage: ["start [--json] [--gateway-port N] [--hooks-path PATH] [--openclaw-config FILE]"],
    flags: [json("log JSON lines instead of text"), ...GATEWAY_FLAGS],
    positionals: 0,
    examples: ["clawrelay start", "clawrelay start --json --gateway-port 18789"],
  },
  {
    kind: "command",
    name: "status",
    summary: "what the running agent reports: relay, last delivery, backlog, dead count, receipts",
    usage: ["status [--json]"],
    flags: [json("print the agent's status answer as JSON")],
    positionals: 0,
    examples: ["clawrelay status", "clawrelay status --json", "clawrelay status >/dev/null; echo $?"],
    // cli-status.ts STATUS_EXIT; the same with --json.
    exitCodes: [
      ["0", "the agent runs and delivers"],
      ["1", "no agent runs (or status could not be read)"],
      ["2", "a usage mistake"],
      ["3", "PAUSED: a configuration error holds every message back (wins over 4 and 5)"],
      ["4", "GATEWAY DOWN: posts to the gateway fail; it is probed until it answers (wins over 5)"],
      ["5", "a lane is stalled: its head failed and waits to retry, or a forward target's app is failing"],
    ],
  },
  {
    kind: "command",
    name: "retry",
    summary: "after a fix, retry now: ends the running agent's waits (a paused 401, a 429 hold, a down gateway's next probe) at once",
    usage: ["retry [--json]"],
    flags: [json("print what was woken as JSON")],
    positionals: 0,
    examples: ["clawrelay retry"],
  },
  {
    kind: "command",
    name: "doctor",
    summary: "check settings, relay, openclaw.json, and ask the running gateway (hooks token, gateway token, chat completions), each with its fix",
    usage: ["doctor [--gateway-port N] [--hooks-path PATH] [--openclaw-config FILE]"],
    flags: GATEWAY_FLAGS,
    positionals: 0,
    examples: ["clawrelay doctor", "clawrelay doctor --openclaw-config ~/.openclaw/openclaw.json"],
  },
  {
    kind: "command",
    name: "send",
    summary: "send a signed message (an a2a envelope) to an agent's inbox; recorded in the outbox (messages --outbox)",
    usage: ["send --to AGENT_ID (--text TEXT | --payload JSON) [--type TYPE] [--reply-to MSG_ID] [--ttl SEC] [--json]"],
    flags: [
      { name: "to", value: "AGENT_ID", about: "the receiving agent (ag_ + 12 hex)" },
      { name: "text", value: "TEXT", about: 'the message text (sent as {"text": TEXT})' },
      { name: "payload", value: "JSON", about: "the payload as a JSON object, instead of --text" },
      { name: "type", value: "TYPE", about: "the envelope type (default message)" },
      { name: "reply-to", value: "MSG_ID", about: "the msg_id this answers" },
      { name: "ttl", value: "SEC", about: "how long the relay keeps it for the receiver, in seconds" },
      json("print the relay's answer (with its signed ack) as JSON"),
    ],
    positionals: 0,
    examples: [
      'clawrelay send --to ag_0123456789ab --text "hello through clawrelay"',
      `clawrelay send --to ag_0123456789ab --payload '{"text":"hi","lang":"en"}' --json`,
    ],
  },
  MESSAGES_COMMAND,
  {
    kind: "command",
    name: "hub register",
    summary: "link the inbox to its hub: token, receipt key, endpoint (or pull), the token shared, policy",
    usage: [
      "hub register [--bind-code CODE --bind-nonce NONCE] [--mode webhook|pull] [--prefix agentgram|botcord] [--agentline-token JWT] [--open] [--claim-token TOKEN] [--json]",
    ],
    flags: [
      { name: "bind-code", value: "CODE", about: "the bd_… code the hub's dashboard shows for a new agent: claims it with this agent's key (then pull mode)" },
      { name: "bind-nonce", value: "NONCE", about: "the base64 nonce shown with the bind code" },
      { name: "mode", value: "MODE", about: "webhook: the hub posts to the inbox (default, unless a bind code or a BotCord identity); pull: the relay pulls from the hub" },
      { name: "prefix", value: "PREFIX", about: "the sub-path prefix the gateway's mappings use: agentgram or botcord (default: learned from the hub's probes; botcord when pulling)" },
      agentlineToken,
      { name: "open", about: 'take messages from anyone (sets {"message_policy":"open"} at the hub)' },
      claimToken,
      json("print the result as JSON instead of the steps"),
    ],
    positionals: 0,
    examples: [
      "clawrelay hub register",
      "clawrelay hub register --bind-code bd_xxx --bind-nonce 3q2+7w==",
      "clawrelay hub register --mode pull",
      "clawrelay hub register --open --prefix botcord",
    ],
  },
  {
    kind: "command",
    name: "hub status",
    summary: "what the relay and the hub say: endpoint, keys, policy, receipts, pulls, other clients of the agent",
    usage: ["hub status [--json] [--agentline-token JWT]"],
    flags: [json("print the report as JSON"), agentlineToken],
    positionals: 0,
    examples: ["clawrelay hub status", "clawrelay hub status --json"],
  },
  ...SOURCE_COMMANDS,
  ...A2A_COMMANDS,
  ...MCP_COMMANDS,
];

export const GROUPS: GroupSpec[] = [
  { kind: "group", name: "hub", summary: "link the inbox to its hub (BotCord, Agentline), and check the link", actions: ["register", "status"] },
  { kind: "group", name: "sources", summary: "webhook senders verified at the relay: GitHub, Stripe, Slack, Standard Webhooks, token", actions: ["add", "set", "list", "rotate", "remove"] },
  A2A_GROUP,
];

function flagLabel(flag: FlagSpec): string {
  const value = flag.value ? (flag.optionalValue ? `[=${flag.value}]` : ` ${flag.value}`) : "";
  return `${flag.short ? `-${flag.short}, ` : ""}--${flag.name}${value}`;
}

function table(rows: [string, string][]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}

const flagRows = (flags: FlagSpec[]): string[] => table(flags.map((flag) => [flagLabel(flag), flag.about]));

/** The few lines shown under a usage mistake. */
export function usageText(topic: HelpTopic): string {
  if (topic === "root") return ["usage: clawrelay <command> [flags]", `commands: ${[...COMMANDS.map((c) => c.name), "help"].join(", ")}`, `Run "clawrelay --help" for what each does.`].join("\n");
  if (topic.kind === "group") return [`usage:`, ...topic.actions.map((a) => `  clawrelay ${topic.name} ${a} [flags]`), `Run "clawrelay ${topic.name} <action> --help" for its flags.`].join("\n");
  return [`usage:`, ...topic.usage.map((line) => `  clawrelay ${line}`), `Run "clawrelay ${topic.name} --help" for every flag.`].join("\n");
}

export function helpText(topic: HelpTopic): string {
  if (topic === "root") {
    const rows: [string, string][] = [...COMMANDS.map((c): [string, string] => [c.name, c.summary]), ["help [COMMAND]", "this list, or one command's help"]];
    return [
      "clawrelay — a permanent public inbox for your OpenClaw agent",
      "",
      "usage: clawrelay <command> [flags]",
      "",
      "commands:",
      ...table(rows),
      "",
      "global flags (every command):",
      ...flagRows([...GLOBAL_FLAGS, { name: "version", short: "v", about: "print the version (clawrelay --version)" }]),
      "",
      'Run "clawrelay <command> --help" (or "clawrelay help <command>") for its flags and examples.',
    ].join("\n");
  }
  if (topic.kind === "group") {
    const actions = topic.actions.map((a) => COMMANDS.find((c) => c.name === `${topic.name} ${a}`));
    return [
      `clawrelay ${topic.name} — ${topic.summary}`,
      "",
      "usage:",
      ...table(actions.flatMap((c) => (c ? [[`clawrelay ${c.name}`, c.summary] as [string, string]] : []))),
      "",
      `Run "clawrelay ${topic.name} <action> --help" for its flags and examples.`,
    ].join("\n");
  }
  return [
    `clawrelay ${topic.name} — ${topic.summary}`,
    "",
    "usage:",
    ...topic.usage.map((line) => `  clawrelay ${line}`),
    ...(topic.flags.length > 0 ? ["", "flags:", ...flagRows(topic.flags)] : []),
    "",
    "global flags:",
    ...flagRows(GLOBAL_FLAGS),
    "",
    "examples:",
    ...topic.examples.map((line) => `  ${line}`),
    ...(topic.exitCodes ? ["", "exit codes:", ...table(topic.exitCodes)] : []),
  ].join("\n");
}
