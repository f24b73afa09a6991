// History's day tables after their day closed (worker/storage/history-store.ts): a dead message whose shelf
// ends later goes into the (closed, counted) table of the day it died, and that day's totals count it — the
// summary's kept count, what gives way to the budget and the floor a cursor's gap is told from.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DAY_MS, dayStartMs } from "../../worker/storage/history-store.ts";
import { claimInbox, poll, postHook } from "../support/workerd/agents.ts";
import { stubOf } from "../support/workerd/socket-fixtures.ts";

describe("history's closed days", () => {
  it("a dead message moved into a day already counted is counted there too", async () => {
    const inbox = await claimInbox();
    const kept = (await (await postHook(inbox, "agentgram_inbox/agent", '{"a":1}')).json()) as { id: number };
    await poll(inbox.agent, `after=${kept.id}&ack=true`);
    const dead = (await (await postHook(inbox, "agentgram_inbox/agent", '{"b":2}')).json()) as { id: number };
    const result = await runInDurableObject(stubOf(inbox), (instance, state) => {
      const { store } = instance;
      const day = store.history.dayList()[0]!;
      const start = dayStartMs(day);
      // Died on the day of the kept message, on the shelf until an hour after that day closed.
      state.storage.sql.exec(`UPDATE messages SET state = 'dead', reason = 'x', dead_at = ?, expires_at = ? WHERE seq = ?`, start + 1, start + DAY_MS + 3_600_000, dead.id);
      const keep = () => store.keepFloor();
      store.history.maintain(start + DAY_MS + 60_000, store.retentionMs, Number.MAX_SAFE_INTEGER, keep);
      const countedBefore = store.history.keptCount();
      store.expireMessages(start + DAY_MS + 3_600_000, start + 30 * DAY_MS, null);
      store.history.maintain(start + DAY_MS + 3_600_001, store.retentionMs, Number.MAX_SAFE_INTEGER, keep);
      const countedAfter = store.history.keptCount();
      // Over the budget: the closed day gives way with every message it holds, and the floor passes both.
      const drops = store.history.maintain(start + DAY_MS + 3_600_002, store.retentionMs, 0, keep);
      return { countedBefore, countedAfter, gaveWay: drops.gaveWay, floor: store.history.floor() };
    });
    expect(result).toEqual({ countedBefore: 1, countedAfter: 2, gaveWay: 2, floor: dead.id });
  });
});
