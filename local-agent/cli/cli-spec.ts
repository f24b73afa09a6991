// The shape of the CLI's command table (cli-help.ts, cli-help-sources.ts): a command's flags, usage
// and examples. Types and one flag maker; covered by test/node/cli-usage.e2e.test.ts.

export interface FlagSpec {
  name: string;
  /** The value's placeholder (`URL`, `N`); absent for a boolean flag. */
  value?: string;
  /** The value may be left out: `--live` alone, or `--live=SECONDS` (never `--live SECONDS`); left out, it reads as "". */
  optionalValue?: boolean;
  short?: string;
  about: string;
}

export interface CommandSpec {
  kind: "command";
  /** As typed after `clawrelay`: "init", "hub register". */
  name: string;
  summary: string;
  /** Synopsis lines, each after "clawrelay ". */
  usage: string[];
  flags: FlagSpec[];
  /** How many positional arguments it takes (messages: an action and an id). */
  positionals: number;
  examples: string[];
  /** Lines shown after the examples, under "exit codes:" (status: what a script reads). */
  exitCodes?: [string, string][];
}

/** A word that only groups sub-commands (`hub`). */
export interface GroupSpec {
  kind: "group";
  name: string;
  summary: string;
  actions: string[];
}

export type HelpTopic = CommandSpec | GroupSpec | "root";

export const json = (what: string): FlagSpec => ({ name: "json", about: what });
