// What a request to a token source with a forward target may carry down to the local app (item 5's
// guards, protocol/forward.ts): tails that could step out of the target's path are refused 400
// invalid_path, a header value the agent cannot send is refused 400 invalid_header_value naming the
// header, and headers only a proxy of the app's own may set are dropped — nothing stored for a refusal.
import { describe, expect, it } from "vitest";
import { claimInbox } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { addSource, lastRefusal, pathOf, postToSource, refusal, storedRequests } from "../support/workerd/sources.ts";

async function tokenSource(inbox: ClaimedInbox): Promise<string> {
  return pathOf((await addSource(inbox, { name: "app", kind: "token", forward: "http://127.0.0.1:3000/hooks" })).post_url);
}

describe("tails that could leave the target's path", () => {
  it("refuses ..;, double-encoded dots, overlong UTF-8 dots and empty segments over HTTP with 400 invalid_path naming them; nothing stored", async () => {
    const inbox = await claimInbox();
    const path = await tokenSource(inbox);
    for (const tail of ["/..;/admin", "/a/..;x=1/b", "/%252e%252e/admin", "/%252E%252E%252Fadmin", "/%C0%AE%C0%AE/admin", "/%E0%80%AE/x", "/a//b", "//evil.example/x"]) {
      const { message } = await refusal(await postToSource(`${path}${tail}`, "{}", { "content-type": "application/json" }), 400, "invalid_path");
      expect(message).toMatch(/"\.\.;x".*empty segment.*%252e.*%C0%AE/);
    }
    expect(await lastRefusal(inbox)).toBe("invalid_path");
    expect(await storedRequests(inbox)).toEqual([]);
  });
});

describe("headers", () => {
  it("refuses a value outside visible ASCII, space and tab with 400 invalid_header_value naming the header; nothing stored", async () => {
    const inbox = await claimInbox();
    const path = await tokenSource(inbox);
    // A value outside ASCII is sent raw by test/node/forward-smuggling.e2e.test.ts: workerd's own fetch, used here, re-encodes it with a warning.
    for (const value of ["a\x01b", "a\x7fb"]) {
      const { message } = await refusal(await postToSource(path, "{}", { "content-type": "application/json", "X-Customer-Name": value }), 400, "invalid_header_value");
      expect(message).toMatch(/x-customer-name/);
    }
    expect(await lastRefusal(inbox)).toBe("invalid_header_value");
    expect(await storedRequests(inbox)).toEqual([]);
    expect((await postToSource(path, "{}", { "content-type": "application/json", "X-Customer-Name": "Zoe\tand Ana" })).status).toBe(200);
    expect((await storedRequests(inbox))[0]!.headers).toContainEqual(["x-customer-name", "Zoe\tand Ana"]);
  });

  it("drops proxy-trust headers (Forwarded, X-Original-URL, X-Client-IP, X-HTTP-Method-Override …) from the stored request", async () => {
    const inbox = await claimInbox();
    const path = await tokenSource(inbox);
    const forged = {
      forwarded: "for=127.0.0.1;host=localhost",
      "x-original-url": "/admin",
      "x-rewrite-url": "/admin",
      "x-client-ip": "127.0.0.1",
      "x-host": "localhost",
      "x-original-host": "localhost",
      "x-http-method-override": "DELETE",
      "x-cluster-client-ip": "127.0.0.1",
      "fastly-client-ip": "127.0.0.1",
      "x-remote-user": "admin",
    };
    const res = await postToSource(path, "{}", { "content-type": "application/json", ...forged, "x-request-id": "r-1" });
    expect(res.status).toBe(200);
    const names = (await storedRequests(inbox))[0]!.headers.map(([name]) => name);
    expect(names).toContain("x-request-id");
    for (const name of Object.keys(forged)) expect(names).not.toContain(name);
  });
});
