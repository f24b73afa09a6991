// What the local agent has finished with, on disk, so a message id is never posted into the gateway
// twice — not after a SIGKILL, nor after a restart long past the gateway's 5-minute Idempotency-Key
// memory — and so the resume cursor survives. An id is written here (fsync'd) before the relay is
// told (ack frame); relay ids strictly increase for an inbox's life, so a cursor plus the ids finished
// above it (out of order: a later lane's message finished before an earlier lane's) is the whole state,
// with the few finished below it: a message restored into its lane by the relay (frame.restored, an
// event an older agent set aside) comes back below the cursor, and its record is what stops a repeat
// post when the agent stops between journalling its ack and the relay seeing it.
// Used by relay-client.ts (via agent.ts); covered by test/node/delivery-journal.test.ts and journal.e2e.test.ts.
//
// File format (UTF-8, one record a line, each ending in "\n"):
//   {"v":1,"agent_id":"ag_…","epoch":"…"|null}           header: whose journal this is — the agent,
//                                                         and the life of its inbox (the relay's
//                                                         challenge names it; null until first seen)
//   f <id> <cursor>                                       one per finish: `id` is finished, and so
//                                                         is every id ≤ `cursor`
// Replaying the lines in order gives the state (the cursor is the max seen). Only the last line can
// be torn — appends are whole lines, fsync'd one at a time — so a garbled last line is a crash
// mid-append and is dropped (its finish never returned, so nothing was acknowledged on it); a line
// torn inside its cursor still parses, with a smaller cursor, which is still true. A garbled line
// anywhere else means the file is not ours to trust: it is started afresh. Past ~1,000 lines the
// file is compacted to the header, `f <cursor> <cursor>` and one line per id above the cursor and per
// id finished below it (the LATE_KEPT latest).
import { closeSync, fchmodSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Whose journal it is. Not the relay URL: one inbox is reached through many (a custom domain, a
 * proxy), and a URL says nothing about whether the inbox behind it is the same life. The relay's
 * `epoch` does; it is adopted when the socket is challenged (adopt()).
 */
export interface JournalScope {
  agentId: string;
}

const COMPACT_AFTER_LINES = 1_000;
/**
 * Ids finished below the cursor that are remembered (the latest). Only a restored message is finished
 * below the cursor, and one is sent again only while its ack may be lost: at most a window's worth per
 * connection (the relay grants at most MAX_WINDOW, 256), so four times that is room to spare.
 */
export const LATE_KEPT = 1_024;
const FILE_MODE = 0o600;
const RECORD = /^f (\d+) (\d+)$/;

interface Replayed {
  epoch: string | null;
  cursor: number;
  above: Set<number>;
  /** Finished when the cursor had already passed them (restored messages), oldest first. */
  late: Set<number>;
  lines: number;
  /** The last line was torn or garbled. */
  tornTail: boolean;
}

export class DeliveryJournal {
  readonly path: string;
  readonly freshReason: string | null;
  readonly #header: { v: number; agent_id: string; epoch: string | null };
  #cursor: number;
  #above: Set<number>;
  #late: Set<number>;
  #lines: number;
  #fd: number | null = null;

  private constructor(path: string, header: { v: number; agent_id: string; epoch: string | null }, state: Replayed, freshReason: string | null) {
    this.path = path;
    this.#header = header;
    this.#cursor = state.cursor;
    this.#above = state.above;
    this.#late = state.late;
    this.#lines = state.lines;
    this.freshReason = freshReason;
  }

  /** Opens (creating if missing) the journal at `path`; a file for another scope or a garbled one is started afresh and `freshReason` says why. I/O errors other than a missing file are thrown. */
  static open(path: string, scope: JournalScope): DeliveryJournal {
    const header = { v: 1, agent_id: scope.agentId, epoch: null as string | null };
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    let text: string | null = null;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    const read = text === null ? null : replay(text, scope);
    const usable = read !== null && "cursor" in read;
    const state = usable ? read : { cursor: 0, above: new Set<number>(), late: new Set<number>(), lines: 0, tornTail: false, epoch: null };
    header.epoch = state.epoch;
    const journal = new DeliveryJournal(path, header, state, read !== null && "reason" in read ? read.reason : null);
    // A torn tail is cut off by rewriting, or the next append would join it into one garbled line.
    if (!usable || state.tornTail) journal.#rewrite();
    else journal.#openAppend();
    return journal;
  }

  /** Every id ≤ cursor is finished. */
  get cursor(): number {
    return this.#cursor;
  }

  has(id: number): boolean {
    return id <= this.#cursor || this.#above.has(id);
  }

  /** Finished by a record of its own, not only by being under the cursor (what a restored message is checked by). */
  recorded(id: number): boolean {
    return this.#above.has(id) || this.#late.has(id);
  }

  /** Records `id` as finished, and every id ≤ `cursor`; durable on disk before it returns. */
  finish(id: number, cursor: number): void {
    checkId(id, "id");
    checkId(cursor, "cursor");
    const next = Math.max(this.#cursor, cursor);
    const line = `f ${id} ${next}\n`;
    const fd = this.#appendFd();
    writeAll(fd, line);
    fsyncSync(fd);
    // Memory changes only once the line is on disk: a failed write must not count as finished.
    this.#lines += 1;
    if (id > next) this.#above.add(id);
    else if (id <= this.#cursor) keepLate(this.#late, id);
    this.#advanceTo(next);
    if (this.#lines > Math.max(COMPACT_AFTER_LINES, 2 * (this.#above.size + this.#late.size + 1))) this.#rewrite();
  }

  /** The relay's ids went backwards (its state was wiped): forget everything, continue from `cursor`. */
  reset(cursor: number): void {
    checkId(cursor, "cursor");
    this.#appendFd();
    this.#cursor = cursor;
    this.#above = new Set();
    this.#late = new Set();
    this.#rewrite();
  }

  /** The life of the inbox this journal's ids belong to (null: not seen yet). */
  get epoch(): string | null {
    return this.#header.epoch;
  }

  /**
   * Binds the journal to the inbox life the relay named. A different one means the ids remembered
   * here are another inbox's (a wiped or redeployed relay): everything is forgotten, and true is
   * returned so the caller can say so. Called before the cursor is sent as `after`.
   */
  adopt(epoch: string): boolean {
    if (this.#header.epoch === epoch) return false;
    const other = this.#header.epoch !== null;
    this.#appendFd();
    this.#header.epoch = epoch;
    if (other) {
      this.#cursor = 0;
      this.#above = new Set();
      this.#late = new Set();
    }
    this.#rewrite();
    return other;
  }

  /** Ids recorded above the cursor, ascending. */
  pending(): number[] {
    return [...this.#above].sort((a, b) => a - b);
  }

  close(): void {
    if (this.#fd === null) return;
    closeSync(this.#fd);
    this.#fd = null;
  }

  #advanceTo(cursor: number): void {
    if (cursor <= this.#cursor) return;
    this.#cursor = cursor;
    for (const id of this.#above) if (id <= cursor) this.#above.delete(id);
  }

  #appendFd(): number {
    if (this.#fd === null) throw new Error(`delivery journal ${this.path} is closed`);
    return this.#fd;
  }

  #openAppend(): void {
    this.#fd = openSync(this.path, "a", FILE_MODE);
    fchmodSync(this.#fd, FILE_MODE);
  }

  // Write a temp file, fsync, rename over, fsync the directory: a crash leaves the old file or the new.
  #rewrite(): void {
    const records = [`f ${this.#cursor} ${this.#cursor}`, ...[...this.pending(), ...this.#late].map((id) => `f ${id} ${this.#cursor}`)];
    const temp = `${this.path}.tmp`;
    rmSync(temp, { force: true });
    const fd = openSync(temp, "wx", FILE_MODE);
    try {
      fchmodSync(fd, FILE_MODE);
      writeAll(fd, [JSON.stringify(this.#header), ...records].join("\n") + "\n");
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, this.path);
    syncDirectory(dirname(this.path));
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
    this.#lines = records.length;
    this.#openAppend();
  }
}

function replay(text: string, scope: JournalScope): Replayed | { reason: string } {
  const lines = text.split("\n");
  const complete = lines[lines.length - 1] === "";
  if (complete) lines.pop();
  const first = lines.shift();
  if (first === undefined || first === "") return { reason: "the journal was empty" };
  const found = parseHeader(first);
  if (!found) return { reason: "the journal was unreadable (its first line is not a journal header)" };
  if (found.agent_id !== scope.agentId) return { reason: `the journal belonged to agent ${found.agent_id}, not ${scope.agentId}` };
  const state: Replayed = { epoch: found.epoch, cursor: 0, above: new Set(), late: new Set(), lines: 0, tornTail: !complete };
  for (const [index, line] of lines.entries()) {
    const match = RECORD.exec(line);
    const id = Number(match?.[1]);
    const cursor = Number(match?.[2]);
    if (!match || !Number.isSafeInteger(id) || !Number.isSafeInteger(cursor)) {
      if (index === lines.length - 1) {
        state.tornTail = true;
        break;
      }
      return { reason: `the journal was unreadable (line ${index + 2} is not a record)` };
    }
    state.lines += 1;
    if (id <= state.cursor) keepLate(state.late, id);
    if (cursor > state.cursor) {
      state.cursor = cursor;
      for (const above of state.above) if (above <= cursor) state.above.delete(above);
    }
    if (id > state.cursor) state.above.add(id);
  }
  return state;
}

function parseHeader(line: string): { agent_id: string; epoch: string | null } | null {
  try {
    const value = JSON.parse(line) as Record<string, unknown> | null;
    if (value?.v !== 1 || typeof value.agent_id !== "string") return null;
    // Journals written before epochs existed have none (and a relay_url, ignored): adopted on connect.
    return { agent_id: value.agent_id, epoch: typeof value.epoch === "string" ? value.epoch : null };
  } catch {
    return null;
  }
}

/** Remembers `id` as finished below the cursor, forgetting the oldest past LATE_KEPT. */
function keepLate(late: Set<number>, id: number): void {
  late.delete(id);
  late.add(id);
  if (late.size > LATE_KEPT) late.delete(late.values().next().value!);
}

function checkId(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`delivery journal: ${name} must be a non-negative integer, got ${value}`);
}

// writeSync may write less than asked (a full disk mid-line); keep going or throw, never half a line silently.
function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text, "utf8");
  for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset);
}

// The rename is durable only once the directory entry is; Windows cannot open a directory, so skip there.
function syncDirectory(dir: string): void {
  let fd: number | null = null;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // best effort: the data itself is already fsync'd
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
