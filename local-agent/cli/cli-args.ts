// Turns argv into what to do: one command with only its own flags parsed (parseArgs, strict), its
// help, or the version. Every mistake is a UsageError in plain words. Pure; imported by cli.ts,
// covered by test/node/cli-usage.e2e.test.ts.
import { parseArgs } from "node:util";
import type { ParseArgsConfig } from "node:util";
import { COMMANDS, GLOBAL_FLAGS, GROUPS } from "./cli-help.ts";
import type { CommandSpec, FlagSpec, HelpTopic } from "./cli-help.ts";

/** A mistake in how the command was typed: cli.ts prints it with the usage of `topic`, exit 2. */
export class UsageError extends Error {
  readonly topic: HelpTopic | undefined;

  constructor(message: string, topic?: HelpTopic) {
    super(message);
    this.name = "UsageError";
    this.topic = topic;
  }
}

export type Values = Record<string, string | boolean | undefined>;

export type Invocation =
  | { kind: "run"; command: CommandSpec; values: Values; positionals: string[] }
  | { kind: "help"; topic: HelpTopic }
  | { kind: "version" };

// A flag whose value may be left out never takes the next word as its value.
const VALUE_FLAGS = new Set([...GLOBAL_FLAGS, ...COMMANDS.flatMap((c) => c.flags)].filter((f) => f.value && !f.optionalValue).map((f) => `--${f.name}`));
const VERSION_FLAG: FlagSpec = { name: "version", short: "v", about: "" };

function optionsOf(flags: FlagSpec[]): NonNullable<ParseArgsConfig["options"]> {
  const options: NonNullable<ParseArgsConfig["options"]> = {};
  for (const flag of flags) options[flag.name] = { type: flag.value ? "string" : "boolean", ...(flag.short ? { short: flag.short } : {}) };
  return options;
}

/** Where the command words are: non-flag arguments, skipping the value after a flag that takes one. */
function words(args: string[]): { word: string; index: number }[] {
  const found: { word: string; index: number }[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (arg === "--") break;
    if (arg.startsWith("-")) {
      if (VALUE_FLAGS.has(arg)) i++;
    } else found.push({ word: arg, index: i });
  }
  return found;
}

function asksForHelp(args: string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === "--help" || arg === "-h");
}

function commandNamed(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}

function flagOwners(flag: string): string[] {
  return COMMANDS.filter((c) => c.flags.some((f) => `--${f.name}` === flag)).map((c) => c.name);
}

/** parseArgs' errors (ERR_PARSE_ARGS_*) in our words; the flag is read from its message. */
function parseFailure(err: unknown, spec: CommandSpec | "root"): UsageError {
  const e = err as { code?: unknown; message?: unknown };
  const message = String(e.message ?? err);
  const flag = /'(-[^' ,]+)/.exec(message)?.[1] ?? "";
  const where = spec === "root" ? "clawrelay" : `clawrelay ${spec.name}`;
  const flags = spec === "root" ? GLOBAL_FLAGS : [...spec.flags, ...GLOBAL_FLAGS];
  const value = flags.find((f) => `--${f.name}` === flag || `-${f.short}` === flag)?.value ?? "VALUE";
  switch (e.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION": {
      const owners = flagOwners(flag);
      return new UsageError(`unknown flag ${flag} for ${where}${owners.length > 0 ? ` (it is a flag of: ${owners.map((o) => `clawrelay ${o}`).join(", ")})` : ""}`, spec);
    }
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      if (message.includes("does not take an argument")) return new UsageError(`${flag} takes no value`, spec);
      if (message.includes("ambiguous")) return new UsageError(`${flag} needs a value: ${flag} ${value} (for a value that starts with "-", write ${flag}=${value})`, spec);
      return new UsageError(`${flag} needs a value: ${flag} ${value}`, spec);
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL": {
      const extra = /'([^']*)'/.exec(message)?.[1] ?? "";
      return new UsageError(`unexpected argument "${extra}": ${where} takes flags only`, spec);
    }
    default:
      return new UsageError(message.split("\n")[0] ?? message, spec);
  }
}

/** `--live` alone becomes `--live=` (parseArgs has no optional values); up to `--` only. */
function withOptionalValues(spec: CommandSpec, args: string[]): string[] {
  const optional = new Set(spec.flags.filter((f) => f.optionalValue).map((f) => `--${f.name}`));
  const end = args.indexOf("--");
  return args.map((arg, i) => (optional.has(arg) && (end === -1 || i < end) ? `${arg}=` : arg));
}

function parse(spec: CommandSpec, given: string[]): Invocation {
  const args = withOptionalValues(spec, given);
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: optionsOf([...spec.flags, ...GLOBAL_FLAGS]), strict: true, allowPositionals: spec.positionals > 0 }) as typeof parsed;
  } catch (err) {
    throw parseFailure(err, spec);
  }
  const extra = parsed.positionals[spec.positionals];
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`, spec);
  return { kind: "run", command: spec, values: parsed.values, positionals: parsed.positionals };
}

/** What the topic words after `clawrelay help` name. */
function helpTopic(names: string[]): HelpTopic {
  if (names.length === 0) return "root";
  const spec = commandNamed(names.join(" "));
  if (spec) return spec;
  const group = GROUPS.find((g) => g.name === names[0]);
  if (group && names.length === 1) return group;
  throw new UsageError(`no help for "${names.join(" ")}": there is no such command`, "root");
}

export function parseInvocation(argv: string[]): Invocation {
  const found = words(argv);
  const first = found[0];
  if (!first) {
    if (asksForHelp(argv)) return { kind: "help", topic: "root" };
    let values: Values;
    try {
      values = parseArgs({ args: argv, options: optionsOf([...GLOBAL_FLAGS, VERSION_FLAG]), strict: true, allowPositionals: false }).values as Values;
    } catch (err) {
      throw parseFailure(err, "root");
    }
    return values.version ? { kind: "version" } : { kind: "help", topic: "root" };
  }
  if (first.word === "help") return { kind: "help", topic: helpTopic(found.slice(1).map((w) => w.word)) };

  const rest = argv.filter((_, i) => i !== first.index);
  const group = GROUPS.find((g) => g.name === first.word);
  if (group) {
    const action = found[1];
    if (!action || !group.actions.includes(action.word)) {
      if (asksForHelp(argv)) return { kind: "help", topic: group };
      const choices = group.actions.join(" or ");
      throw new UsageError(action ? `unknown ${group.name} action "${action.word}": use ${choices}` : `${group.name} needs an action: ${choices}`, group);
    }
    const spec = commandNamed(`${group.name} ${action.word}`);
    if (!spec) throw new UsageError(`unknown command "${group.name} ${action.word}"`, group);
    if (asksForHelp(argv)) return { kind: "help", topic: spec };
    return parse(spec, argv.filter((_, i) => i !== first.index && i !== action.index));
  }
  const spec = commandNamed(first.word);
  if (!spec) throw new UsageError(`unknown command "${first.word}"`, "root");
  if (asksForHelp(argv)) return { kind: "help", topic: spec };
  return parse(spec, rest);
}
