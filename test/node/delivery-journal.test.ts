// The delivery journal on real files: what survives close/open (a restart), a crash mid-append, a file
// that is not ours, compaction, and a relay whose ids went backwards.
import { appendFileSync, chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeliveryJournal, LATE_KEPT } from "../../local-agent/delivery/delivery-journal.ts";

const scope = { agentId: "ag_journaltest" };
let dir: string;
let file: string;
const opened: DeliveryJournal[] = [];

function open(path = file, at = scope): DeliveryJournal {
  const journal = DeliveryJournal.open(path, at);
  opened.push(journal);
  return journal;
}

function reopen(journal: DeliveryJournal): DeliveryJournal {
  journal.close();
  return open();
}

const lines = () => readFileSync(file, "utf8").split("\n").filter((l) => l !== "");

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "clawrelay-journal-"));
  file = join(dir, "journal");
});
afterEach(() => {
  for (const journal of opened.splice(0)) journal.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a fresh journal", () => {
  it("starts at cursor 0 with nothing finished, writes its header, and is not 'afresh'", () => {
    const journal = open();
    expect(journal.cursor).toBe(0);
    expect(journal.has(1)).toBe(false);
    expect(journal.pending()).toEqual([]);
    expect(journal.freshReason).toBeNull();
    expect(JSON.parse(lines()[0] ?? "")).toEqual({ v: 1, agent_id: scope.agentId, epoch: null });
  });

  it("is created with mode 600, and stays so after a compaction rewrite", () => {
    const journal = open();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    journal.reset(3);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("narrows an existing journal readable by others back to mode 600, keeping its state", () => {
    const first = open();
    first.finish(4, 4);
    first.close();
    chmodSync(file, 0o644);
    const journal = open();
    expect(journal.cursor).toBe(4);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

describe("finish", () => {
  it("advances the cursor and the cursor survives close/open", () => {
    const journal = open();
    journal.finish(1, 1);
    journal.finish(2, 2);
    expect(journal.cursor).toBe(2);
    expect(lines().slice(1)).toEqual(["f 0 0", "f 1 1", "f 2 2"]); // `f 0 0`: a new file is written as a compacted one
    const again = reopen(journal);
    expect(again.cursor).toBe(2);
    expect(again.has(2)).toBe(true);
    expect(again.has(3)).toBe(false);
    expect(again.freshReason).toBeNull();
  });

  it("keeps ids finished above the cursor across a restart, and prunes them once the cursor passes", () => {
    const journal = open();
    journal.finish(5, 2);
    journal.finish(7, 2);
    expect(journal.pending()).toEqual([5, 7]);
    const again = reopen(journal);
    expect(again.has(5)).toBe(true);
    expect(again.has(6)).toBe(false);
    expect(again.has(7)).toBe(true);
    expect(again.pending()).toEqual([5, 7]);
    again.finish(6, 6);
    expect(again.cursor).toBe(6);
    expect(again.pending()).toEqual([7]);
    expect(reopen(again).pending()).toEqual([7]);
  });

  it("never moves the cursor back", () => {
    const journal = open();
    journal.finish(10, 10);
    journal.finish(11, 4);
    expect(journal.cursor).toBe(10);
    expect(journal.pending()).toEqual([11]);
    expect(reopen(journal).cursor).toBe(10);
  });

  it("refuses ids that are not non-negative integers, and writes nothing for them", () => {
    const journal = open();
    expect(() => journal.finish(-1, 0)).toThrow(RangeError);
    expect(() => journal.finish(1.5, 0)).toThrow(RangeError);
    expect(() => journal.finish(1, Number.NaN)).toThrow(RangeError);
    expect(lines()).toHaveLength(2); // header and the open-time `f 0 0`
  });

  it("throws once closed instead of losing the record", () => {
    const journal = open();
    journal.close();
    expect(() => journal.finish(1, 1)).toThrow(/closed/);
  });
});

describe("a crash mid-append", () => {
  it("drops a torn last line, and later appends start on a line of their own", () => {
    const journal = open();
    journal.finish(1, 1);
    journal.finish(2, 2);
    journal.close();
    appendFileSync(file, "f 3"); // SIGKILL halfway through `f 3 3\n`
    const again = open();
    expect(again.freshReason).toBeNull();
    expect(again.cursor).toBe(2);
    expect(again.has(3)).toBe(false);
    again.finish(3, 3);
    expect(reopen(again).cursor).toBe(3);
  });

  it("keeps a torn last line that still parses (only its cursor was cut short, so it is still true)", () => {
    const journal = open();
    journal.finish(1, 1);
    journal.close();
    appendFileSync(file, "f 120 1"); // `f 120 120\n` cut after the id
    const again = open();
    expect(again.has(120)).toBe(true);
    expect(again.cursor).toBe(1);
  });
});

describe("a file that is not this agent's, or not readable", () => {
  it("another agent id → started afresh, saying whose it was", () => {
    const journal = open();
    journal.finish(9, 9);
    journal.close();
    const other = open(file, { ...scope, agentId: "ag_someoneelse" });
    expect(other.cursor).toBe(0);
    expect(other.freshReason).toContain("ag_journaltest");
    expect(JSON.parse(lines()[0] ?? "").agent_id).toBe("ag_someoneelse");
  });

  it("the first epoch seen is adopted and kept across a restart; the same epoch again changes nothing", () => {
    const journal = open();
    journal.finish(9, 9);
    expect(journal.adopt("1700000000000")).toBe(false);
    expect(journal.cursor).toBe(9);
    const again = reopen(journal);
    expect(again.epoch).toBe("1700000000000");
    expect(again.adopt("1700000000000")).toBe(false);
    expect(again.cursor).toBe(9);
    expect(JSON.parse(lines()[0] ?? "").epoch).toBe("1700000000000");
  });

  it("regression: another epoch (the inbox was created anew) forgets the cursor and the ids above it, on disk too", () => {
    const journal = open();
    journal.adopt("1");
    journal.finish(9, 7);
    expect(journal.adopt("2")).toBe(true);
    expect(journal.cursor).toBe(0);
    expect(journal.has(9)).toBe(false);
    const again = reopen(journal);
    expect(again.epoch).toBe("2");
    expect(again.cursor).toBe(0);
    expect(again.has(7)).toBe(false);
  });

  it("a journal written before epochs (with a relay_url) is read as is, its epoch adopted on connect", () => {
    writeFileSync(file, `${JSON.stringify({ v: 1, agent_id: scope.agentId, relay_url: "https://relay.example" })}\nf 5 5\n`, { mode: 0o600 });
    const journal = open();
    expect(journal.freshReason).toBeNull();
    expect(journal.cursor).toBe(5);
    expect(journal.epoch).toBeNull();
    expect(journal.adopt("42")).toBe(false);
    expect(journal.cursor).toBe(5);
  });

  it("a garbled line in the middle → started afresh as unreadable", () => {
    const journal = open();
    journal.finish(1, 1);
    journal.close();
    appendFileSync(file, "xx garbage\nf 2 2\n");
    const again = open();
    expect(again.cursor).toBe(0);
    expect(again.freshReason).toMatch(/unreadable/);
    again.finish(4, 4);
    expect(reopen(again).freshReason).toBeNull();
  });

  it("a file that is not a journal at all → started afresh as unreadable", () => {
    writeFileSync(file, "hello\nworld\n");
    const journal = open();
    expect(journal.cursor).toBe(0);
    expect(journal.freshReason).toMatch(/unreadable/);
  });
});

describe("compaction", () => {
  it("keeps the state and shrinks the file (5,000 finishes)", () => {
    const journal = open();
    journal.finish(5_002, 0); // finished out of order: pending through every compaction
    for (let id = 1; id <= 5_000; id++) journal.finish(id, id);
    expect(journal.cursor).toBe(5_000);
    expect(journal.pending()).toEqual([5_002]);
    expect(lines().length).toBeLessThan(1_100);
    const again = reopen(journal);
    expect(again.cursor).toBe(5_000);
    expect(again.pending()).toEqual([5_002]);
    expect(again.has(5_001)).toBe(false);
  });

  it("after a rewrite the file is the header, `f <cursor> <cursor>` and one line per pending id", () => {
    const journal = open();
    journal.finish(8, 3);
    journal.finish(6, 3);
    journal.reset(3); // a rewrite, keeping nothing pending
    journal.finish(9, 3);
    journal.finish(5, 3);
    for (let i = 0; i < 1_000; i++) journal.finish(2, 3);
    expect(lines().slice(1, 4)).toEqual(["f 3 3", "f 5 3", "f 9 3"]);
    expect(lines().length).toBeLessThan(1_000);
  });
});

describe("ids finished below the cursor (lanes: a restored message)", () => {
  it("are recorded (an id merely under the cursor is not), through a reopen and a compaction; the latest LATE_KEPT are kept", () => {
    const journal = open();
    journal.finish(100, 100);
    journal.finish(7, 100);
    expect(journal.recorded(7)).toBe(true);
    expect(journal.recorded(8)).toBe(false);
    expect(journal.has(8)).toBe(true);
    journal.finish(102, 100);
    expect(journal.recorded(102)).toBe(true);
    const again = reopen(journal);
    expect([again.recorded(7), again.recorded(8), again.recorded(102)]).toEqual([true, false, true]);
    again.finish(10_000, 10_000);
    for (let id = 1_000; id < 1_000 + LATE_KEPT; id++) again.finish(id, 10_000);
    expect(again.recorded(7)).toBe(false);
    expect(again.recorded(1_000)).toBe(true);
    expect(lines().length).toBeLessThan(3 * LATE_KEPT);
    const third = reopen(again);
    expect([third.recorded(7), third.recorded(1_000), third.recorded(999 + LATE_KEPT)]).toEqual([false, true, true]);
    expect(third.cursor).toBe(10_000);
  });
});

describe("reset (the relay's ids went backwards)", () => {
  it("forgets everything, continues from the given cursor, and the file says so", () => {
    const journal = open();
    journal.finish(50, 40);
    journal.finish(60, 40);
    journal.reset(0);
    expect(journal.cursor).toBe(0);
    expect(journal.has(50)).toBe(false);
    expect(journal.pending()).toEqual([]);
    expect(lines().slice(1)).toEqual(["f 0 0"]);
    journal.finish(1, 1);
    const again = reopen(journal);
    expect(again.cursor).toBe(1);
    expect(again.has(50)).toBe(false);
  });
});
