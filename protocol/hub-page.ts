// A page of hub records (GET /hub/inbox, GET /hub/history), read strictly: {"messages":[record…],
// "has_more":…}. A record that fails the strict rules (strict-json.ts: a duplicate key, a lone
// surrogate, too deep) is set aside with the reason instead of failing the page, so one bad record
// neither holds up the others nor comes back forever: the relay's pull stores it dead and confirms it,
// its bridge passes over it, the agent's history reader sees a record without an envelope. A page whose
// own frame is bad is a HubCallError (hub_bad_answer). A page holding more records than were asked for
// is cut to the number asked (the rest are neither stored nor confirmed: leased records come back when
// their lease ends), so a hub cannot fill an inbox with one answer. Used by hub-api-inbox.ts; covered by
// test/protocol/hub-page.test.ts.
import { HubCallError } from "./hub-api-core.ts";
import { MAX_JSON_DEPTH, containerEnd, strictJsonProblem } from "./strict-json.ts";

/** Marks a record set aside by the strict read: a symbol, so no field the hub sends can stand for it. */
export const REFUSED: unique symbol = Symbol("refused by the strict read");

export interface HubRecord {
  hub_msg_id: string;
  envelope: unknown;
  /** History: queued | processing | delivered | acked | done (failed records are not listed). */
  state?: string;
  created_at?: string;
  room_id?: string | null;
  topic?: string | null;
  /** Set on a record the strict read refused: why, and the record's text as the hub sent it. */
  [REFUSED]?: { reason: string; text: string };
  [field: string]: unknown;
}

/** The page, its list and the record wrap each envelope: a record keeps a posted envelope's allowance. */
const PAGE_DEPTH = MAX_JSON_DEPTH + 3;
/** A page lists at most 100 records; more problems than that is not a page of records. */
const MAX_REFUSED = 100;

/** The record's hub_msg_id as a lenient reader sees it (null when there is none to confirm it by). */
function lenientId(text: string): string | null {
  try {
    const id = (JSON.parse(text) as { hub_msg_id?: unknown } | null)?.hub_msg_id;
    return typeof id === "string" && id !== "" ? id : null;
  } catch {
    // Not JSON even to a lenient reader: no id to confirm or pass it over by.
    return null;
  }
}

/** Whether the array opening at `at` is the value of the page's "messages" member. */
function isMessagesList(text: string, at: number): boolean {
  return /"messages"\s*:\s*$/.test(text.slice(Math.max(0, at - 64), at));
}

/**
 * The page's records in the hub's order and whether more follow. Each refused record is replaced in
 * the text by a marker, and comes back as {hub_msg_id, envelope: null, [REFUSED]}; one without a
 * readable hub_msg_id cannot be confirmed or passed over, so it is left out. At most `limit` records
 * (the number asked for) come back; a page cut to it says more follow.
 */
export function readPage(text: string, what: string, limit: number): { messages: HubRecord[]; hasMore: boolean; cut: number } {
  const marker = `clawrelay-refused-${crypto.randomUUID()}-`;
  const refused: HubRecord[] = [];
  let rest = text;
  for (let problem = strictJsonProblem(rest, PAGE_DEPTH); problem; problem = strictJsonProblem(rest, PAGE_DEPTH)) {
    const [page, list, record] = problem.openAt;
    if (page === undefined || list === undefined || record === undefined || rest.charCodeAt(record) !== 0x7b || !isMessagesList(rest, list) || refused.length >= MAX_REFUSED) {
      throw new HubCallError(502, "hub_bad_answer", `${what}: the hub answered with JSON clawrelay refuses: ${problem.message}`);
    }
    const end = containerEnd(rest, record);
    const recordText = rest.slice(record, end);
    refused.push({ hub_msg_id: lenientId(recordText) ?? "", envelope: null, [REFUSED]: { reason: problem.message, text: recordText } });
    rest = `${rest.slice(0, record)}${JSON.stringify(marker + (refused.length - 1))}${rest.slice(end)}`;
  }
  let body: unknown;
  try {
    body = JSON.parse(rest);
  } catch {
    throw new HubCallError(502, "hub_bad_answer", `${what}: the hub answered without JSON`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new HubCallError(502, "hub_bad_answer", `${what}: the hub answered without a JSON object`);
  const page = body as Record<string, unknown>;
  const list: unknown[] = Array.isArray(page.messages) ? page.messages : [];
  const messages = list
    .map((m) => {
      if (typeof m !== "string" || !m.startsWith(marker)) return m;
      const set = refused[Number(m.slice(marker.length))];
      return set?.hub_msg_id ? set : null;
    })
    .filter((m): m is HubRecord => typeof m === "object" && m !== null && typeof (m as HubRecord).hub_msg_id === "string");
  const cut = Math.max(0, messages.length - limit);
  return { messages: messages.slice(0, limit), hasMore: page.has_more === true || cut > 0, cut };
}
