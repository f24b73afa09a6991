// One line per event, human-readable or JSON (--json). Callers pass only fields that are safe to
// print: ids, paths, statuses, timings — never tokens or keys. A path or an error text may still hold
// what a sender or an app wrote: every line is escaped for the terminal it lands on (cli/terminal-text.ts).
import { terminalOutput } from "./cli/terminal-text.ts";

export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
}

/** `event key=value …`, values with spaces quoted. */
export function formatEvent(event: string, fields: LogFields = {}): string {
  const rest = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === "string" && /\s/.test(v) ? JSON.stringify(v) : String(v)}`)
    .join(" ");
  return rest ? `${event} ${rest}` : event;
}

export function createLogger(options: { json?: boolean; write?: (line: string) => void } = {}): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(line + "\n"));
  const emit = (level: string, event: string, fields: LogFields = {}) => {
    const time = new Date().toISOString();
    if (options.json) {
      write(terminalOutput(JSON.stringify({ time, level, event, ...fields })));
      return;
    }
    write(terminalOutput(`${time} ${level.padEnd(5)} ${formatEvent(event, fields)}`));
  };
  return {
    info: (event, fields) => emit("info", event, fields),
    warn: (event, fields) => emit("warn", event, fields),
    error: (event, fields) => emit("error", event, fields),
  };
}

export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };
