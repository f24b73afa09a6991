// `npm start`'s printed one-liners (issue 24, item 6: the webhook one-liner went to the dead shelf under
// the recommended per-sender mapping, `sessionKey template rendered empty`). The real gateway delivers
// their bodies in test/openclaw/mapping-fix.interop.test.ts.
import { describe, expect, it } from "vitest";
import { DEMO_WEBHOOK_BODY, startLines } from "../../scripts/start-lines.ts";

const lines = startLines({ home: ".clawrelay-dev/home", agentId: "ag_0123456789ab", hooksUrl: "http://127.0.0.1:8787/inbox/ag_0123456789ab/hooks", webhookToken: "crw_x", apiPort: 19791 });

describe("startLines", () => {
  it("the webhook one-liner posts a hub-shaped body: message, name and an agentline: sessionKey", () => {
    const curl = lines.find((line) => line.includes("/hooks/agentgram_inbox/agent"));
    const body = JSON.parse(/-d '([^']*)'/.exec(curl ?? "")?.[1] ?? "null") as Record<string, unknown>;
    expect(body).toEqual(DEMO_WEBHOOK_BODY);
    expect(body.sessionKey).toMatch(/^agentline:./);
    expect(body.message).toBe("hello as a webhook");
    expect(curl).toContain("Bearer crw_x");
  });

  it("the send one-liner names the dev home and the agent", () => {
    expect(lines).toContain('  npx clawrelay --home .clawrelay-dev/home send --to ag_0123456789ab --text "hello through clawrelay"');
  });
});
