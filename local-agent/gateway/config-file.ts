// Reading a settings file the user (or anyone who can write beside it) may have pointed anywhere:
// agent.json, openclaw.json and its .env, a token file, run.json. Each is read only when it is a
// regular file after links are followed, and only up to a bound: a FIFO would block the read for good,
// and a link to /dev/zero (or a runaway file) would grow memory without end. The file is opened
// non-blocking and checked on its descriptor, so a swap between a check and the read changes nothing.
// Used by settings.ts, openclaw-config.ts, gateway-token.ts and cli/running-agent.ts; covered by
// test/node/config-file-bounds.test.ts.
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import type { Stats } from "node:fs";
import { AgentError } from "../errors.ts";

/** The most any of these files may hold; far above a real one (docs/configuration.md says it). */
export const CONFIG_FILE_MAX_BYTES = 1024 * 1024;

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  if (stats.isSocket()) return "a socket";
  return "not a regular file";
}

/**
 * The file's text, or a typed refusal naming it: `config_file_unreadable` when it is not a regular
 * file or holds more than `maxBytes`. A missing file throws Node's own ENOENT (callers ask existsSync
 * first, or treat it as absent).
 */
export function readConfigText(path: string, maxBytes = CONFIG_FILE_MAX_BYTES): string {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer before fstat could refuse it.
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new AgentError("config_file_unreadable", `${path} is ${kindOf(stats)}, not a settings file: replace it with a regular file (a link to one is fine)`);
    if (stats.size > maxBytes) throw tooLarge(path, maxBytes);
    // Read to the bound plus one byte, whatever the size said: a file that grows meanwhile is still cut off.
    const buffer = Buffer.alloc(Math.min(stats.size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length > maxBytes) throw tooLarge(path, maxBytes);
      if (length === buffer.length) break;
    }
    return buffer.subarray(0, length).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

function tooLarge(path: string, maxBytes: number): AgentError {
  return new AgentError("config_file_unreadable", `${path} holds more than ${maxBytes} bytes, far more than a settings file does: check what it is (a link to the wrong file?)`);
}
