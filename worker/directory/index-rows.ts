// Row formats of the persisted search index (index-store.ts): the unit arrays by chunk, agent names by
// ordinal, and postings blocks. Pure encoding and decoding, platform-free; a row that does not decode
// throws IndexFormatError (the store then rebuilds from the cards). Covered by
// test/worker/directory/persisted-index.test.ts.
//
// Numbers are stored as typed-array bytes in the machine's order: little-endian wherever workerd runs.
import { IndexFormatError } from "./term-index.ts";
import type { BaseList, Postings } from "./term-index.ts";

/** Unit ids per chunk: a block stores ids as Uint16 offsets within its chunk. */
export const CHUNK_UNITS = 16_384;
export const NAMES_PER_ROW = 4096;
/**
 * A block closes past this many bytes of entries (6 each); one term's entries in a chunk are never split.
 * A search reads one block per chunk for each term it has not cached: 16 KB read a third less per miss
 * than 64 KB at 100,000 cards, for ~0.1 more rows written per publish.
 */
export const BLOCK_BYTES = 16 * 1024;
/** Block row id = chunk · BLOCK_IDS + position in the chunk. */
export const BLOCK_IDS = 1 << 20;

/** A unit chunk's row: agent ordinals (-1 dead or unused), skill positions and lengths, CHUNK_UNITS each. */
export interface UnitsRow { agent: ArrayBuffer; skill: ArrayBuffer; length: ArrayBuffer }

export function encodeUnits(chunk: number, agent: Int32Array, skill: Int16Array, length: Float64Array): UnitsRow {
  const from = chunk * CHUNK_UNITS;
  const to = Math.min(agent.length, from + CHUNK_UNITS);
  const row = { agent: new Int32Array(CHUNK_UNITS).fill(-1), skill: new Int16Array(CHUNK_UNITS), length: new Float64Array(CHUNK_UNITS) };
  row.agent.set(agent.subarray(from, to));
  row.skill.set(skill.subarray(from, to));
  row.length.set(length.subarray(from, to));
  return { agent: row.agent.buffer, skill: row.skill.buffer, length: row.length.buffer };
}

/** Copies a unit chunk's row into the arrays at its place. */
export function decodeUnits(chunk: number, row: Record<string, unknown>, agent: Int32Array, skill: Int16Array, length: Float64Array): void {
  const bytes = (value: unknown, size: number) => {
    if (!(value instanceof ArrayBuffer) || value.byteLength !== size * CHUNK_UNITS) throw new IndexFormatError(`unit chunk ${chunk} has the wrong size`);
    return value;
  };
  const at = chunk * CHUNK_UNITS;
  agent.set(new Int32Array(bytes(row.agent, 4)).subarray(0, agent.length - at), at);
  skill.set(new Int16Array(bytes(row.skill, 2)).subarray(0, skill.length - at), at);
  length.set(new Float64Array(bytes(row.length, 8)).subarray(0, length.length - at), at);
}

/** A JSON array of `count` strings (agent names of a row, first terms of a chunk's blocks). */
export function decodeStrings(text: unknown, count: number | null, what: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(String(text));
  } catch {
    throw new IndexFormatError(`${what} is not JSON`);
  }
  if (!Array.isArray(value) || (count !== null && value.length !== count) || !value.every((item) => typeof item === "string")) {
    throw new IndexFormatError(`${what} is not an array of ${count ?? "some"} strings`);
  }
  return value as string[];
}

/** One block: consecutive terms (sorted) of one chunk, and their entries. */
export interface BlockRow { first: string; terms: string; ids: ArrayBuffer; tfs: ArrayBuffer }

/** A chunk's postings (global ids, all in the chunk) as blocks, terms in code-unit order. */
export function encodeBlocks(chunk: number, postings: ReadonlyMap<string, Postings>): BlockRow[] {
  const base = chunk * CHUNK_UNITS;
  const terms = [...postings.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const blocks: BlockRow[] = [];
  let pending: string[] = [];
  let entries = 0;
  const close = () => {
    const ids = new Uint16Array(entries);
    const tfs = new Float32Array(entries);
    let at = 0;
    const header = pending.map((term) => {
      const list = postings.get(term)!;
      for (let i = 0; i < list.ids.length; i++, at++) {
        ids[at] = list.ids[i]! - base;
        tfs[at] = list.tfs[i]!;
      }
      return [term, list.ids.length];
    });
    blocks.push({ first: pending[0]!, terms: JSON.stringify(header), ids: ids.buffer, tfs: tfs.buffer });
    pending = [];
    entries = 0;
  };
  for (const term of terms) {
    pending.push(term);
    entries += postings.get(term)!.ids.length;
    if (entries * 6 >= BLOCK_BYTES) close();
  }
  if (pending.length > 0) close();
  return blocks;
}

export interface DecodedBlock { terms: [term: string, count: number][]; ids: Uint16Array; tfs: Float32Array }

/** A block row, its header checked: sorted terms starting at `first`, counts matching the entries (checkEntries checks those). */
export function decodeBlock(row: Record<string, unknown>, first: string, what: string): DecodedBlock {
  let header: unknown;
  try {
    header = JSON.parse(String(row.terms));
  } catch {
    throw new IndexFormatError(`${what}: header is not JSON`);
  }
  const { ids, tfs } = row;
  if (!Array.isArray(header) || header.length === 0 || !(ids instanceof ArrayBuffer) || !(tfs instanceof ArrayBuffer) || ids.byteLength % 2 !== 0 || tfs.byteLength % 4 !== 0) {
    throw new IndexFormatError(`${what} is malformed`);
  }
  const block: DecodedBlock = { terms: header as [string, number][], ids: new Uint16Array(ids), tfs: new Float32Array(tfs) };
  let sum = 0;
  let previous = "";
  block.terms.forEach((entry, i) => {
    const ok = Array.isArray(entry) && typeof entry[0] === "string" && Number.isInteger(entry[1]) && entry[1] > 0 && (i === 0 ? entry[0] === first : entry[0] > previous);
    if (!ok) throw new IndexFormatError(`${what}: header entry ${i} is malformed`);
    previous = entry[0];
    sum += entry[1];
  });
  if (sum !== block.ids.length || sum !== block.tfs.length) throw new IndexFormatError(`${what}: ${sum} entries announced, ${block.ids.length} stored`);
  return block;
}

/** The terms a block's header lists (its `terms` column alone, so the entries are not decoded). */
export function blockTerms(text: unknown, what: string): string[] {
  let header: unknown;
  try {
    header = JSON.parse(String(text));
  } catch {
    throw new IndexFormatError(`${what}: header is not JSON`);
  }
  if (!Array.isArray(header)) throw new IndexFormatError(`${what} is malformed`);
  return header.map((entry: unknown, i) => {
    if (!Array.isArray(entry) || typeof entry[0] !== "string") throw new IndexFormatError(`${what}: header entry ${i} is malformed`);
    return entry[0];
  });
}

/** Where `term`'s entries start in a block, and how many; null when the block lacks it. */
export function entriesOf(block: DecodedBlock, term: string): [at: number, count: number] | null {
  let at = 0;
  for (const [candidate, count] of block.terms) {
    if (candidate === term) return [at, count];
    at += count;
  }
  return null;
}

/** Checks entries [from, to) of a block (only those a search reads): offsets below `units`, positive frequencies. */
export function checkEntries(block: DecodedBlock, from: number, to: number, units: number, what: string): void {
  for (let i = from; i < to; i++) {
    const tf = block.tfs[i]!;
    if (block.ids[i]! >= units || !(tf > 0 && tf < 2 ** 24)) throw new IndexFormatError(`${what}: entry ${i} is out of range`);
  }
}

/** The block of a chunk that may hold `term`: the last whose first term is ≤ term; -1 for none. */
export function blockFor(firstTerms: readonly string[], term: string): number {
  let lo = 0;
  for (let hi = firstTerms.length; lo < hi; ) {
    const mid = (lo + hi) >> 1;
    if (firstTerms[mid]! <= term) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** A block's entries of live units (agent ≥ 0), added by term to `into`, with global ids. */
export function liveEntries(block: DecodedBlock, chunk: number, agent: Int32Array, into: Map<string, Postings>): void {
  let at = 0;
  for (const [term, count] of block.terms) {
    const list: Postings = { ids: [], tfs: [] };
    for (const end = at + count; at < end; at++) {
      const id = chunk * CHUNK_UNITS + block.ids[at]!;
      if (agent[id]! >= 0) list.ids.push(id), list.tfs.push(block.tfs[at]!);
    }
    if (list.ids.length > 0) into.set(term, list);
  }
}

/** `into` with `more`'s entries appended, term by term. */
export function mergePostings(into: Map<string, Postings>, more: ReadonlyMap<string, Postings> | undefined): Map<string, Postings> {
  for (const [term, list] of more ?? []) {
    const existing = into.get(term);
    if (!existing) into.set(term, list);
    else for (let i = 0; i < list.ids.length; i++) existing.ids.push(list.ids[i]!), existing.tfs.push(list.tfs[i]!);
  }
  return into;
}

/** One chunk's entries of a term, as read from its block. */
export interface Piece { chunk: number; offsets: Uint16Array; tfs: Float32Array }

/** A term's pieces from several chunks as one BaseList (copied: the blocks they came from can go). */
export function joinPieces(pieces: readonly Piece[]): BaseList {
  const total = pieces.reduce((n, piece) => n + piece.offsets.length, 0);
  const list: BaseList = { bases: new Int32Array(pieces.length), ends: new Int32Array(pieces.length), offsets: new Uint16Array(total), tfs: new Float32Array(total) };
  let at = 0;
  pieces.forEach((piece, s) => {
    list.offsets.set(piece.offsets, at);
    list.tfs.set(piece.tfs, at);
    at += piece.offsets.length;
    list.bases[s] = piece.chunk * CHUNK_UNITS;
    list.ends[s] = at;
  });
  return list;
}

/** Recent postings split by the chunk of their unit ids. */
export function byChunk(postings: ReadonlyMap<string, Postings>): Map<number, Map<string, Postings>> {
  const chunks = new Map<number, Map<string, Postings>>();
  for (const [term, { ids, tfs }] of postings) {
    ids.forEach((id, i) => {
      const chunk = Math.floor(id / CHUNK_UNITS);
      let terms = chunks.get(chunk);
      if (!terms) chunks.set(chunk, (terms = new Map()));
      let list = terms.get(term);
      if (!list) terms.set(term, (list = { ids: [], tfs: [] }));
      list.ids.push(id);
      list.tfs.push(tfs[i]!);
    });
  }
  return chunks;
}
