// Reading a settings file the user (or anyone who can write beside it) may have pointed anywhere:
// agent.json, openclaw.json and its .env, a token file, run.json. Each is read only when it is a
// regular file after links are followed, and only up to a bound: a FIFO would block the read for good,
// and a link to /dev/zero (or a runaway file) would grow memory without end. Anything else is refused
// before it is opened; the file is then opened non-blocking and checked again on its descriptor, so a
// swap between the check and the read changes nothing; it is read to its end, whatever its size said.
// Used by settings.ts, openclaw-config.ts, gateway-token.ts and cli/running-agent.ts; covered by
// test/node/config-file-bounds.test.ts.
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from "node:fs";
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
  // Refused before it is opened: opening a device can act (a terminal, a watchdog), even when never read.
  refuseIrregular(path, statSync(path));
  // O_NONBLOCK: a FIFO swapped in after the stat would otherwise hold the open until a writer came; O_NOCTTY:
  // a terminal swapped in never becomes the process's controlling terminal. fstat then decides on the descriptor.
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0));
  try {
    const stats = fstatSync(fd);
    refuseIrregular(path, stats);
    if (stats.size > maxBytes) throw tooLarge(path, maxBytes);
    // To the end, whatever the size said (a file written meanwhile, a procfs file that says 0), never past the bound.
    const chunks: Buffer[] = [];
    let length = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(READ_CHUNK_BYTES, maxBytes + 1 - length));
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      chunks.push(chunk.subarray(0, read));
      length += read;
      if (length > maxBytes) throw tooLarge(path, maxBytes);
    }
    return Buffer.concat(chunks, length).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** Reads are this large at most: a settings file takes one or two. */
const READ_CHUNK_BYTES = 64 * 1024;

function refuseIrregular(path: string, stats: Stats): void {
  if (!stats.isFile()) throw new AgentError("config_file_unreadable", `${path} is ${kindOf(stats)}, not a settings file: replace it with a regular file (a link to one is fine)`);
}

function tooLarge(path: string, maxBytes: number): AgentError {
  return new AgentError("config_file_unreadable", `${path} holds more than ${maxBytes} bytes, far more than a settings file does: check what it is (a link to the wrong file?)`);
}
