import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { it } from "vitest";
import { claimInbox } from "../support/workerd/agents.ts";
import { connect } from "../support/workerd/socket-client.ts";

it("probe", async () => {
  const inbox = await claimInbox();
  const stub = env.INBOX.getByName(inbox.agent.id);
  const a = await connect(inbox.agent.id);
  await a.auth(inbox.agent);
  const r = await runInDurableObject(stub, async (inst, state) => {
    const out: string[] = [];
    const s = state.getWebSockets()[0]!;
    s.close(4409, "replaced");
    const res = await inst.fetch(new Request(`https://relay.test/inbox/${inbox.agent.id}/hooks/a/b`, { method: "POST", headers: { authorization: `Bearer ${inbox.token}` }, body: "hello" }));
    out.push(`post ${res.status} ${await res.text()} listed ${state.getWebSockets().length}`);
    await new Promise((r) => setTimeout(r, 50));
    out.push(`later listed ${state.getWebSockets().length}`);
    return out;
  });
  console.log(r, a.closed);
});
