// The address guard of forwarded posts (local-agent/forward/address-guard.ts, app-client.ts): a public
// IP literal, or a name that resolves to a public address, is refused before any connection unless the
// source allows a public target; the name is checked by the lookup the connection itself uses, so a
// name that resolves privately once and publicly the next time (DNS rebinding) is caught when it connects.
// Names are resolved by an injected lookup: nothing here connects outside this machine.
// The agent's own local API port on this machine is refused too, whatever the source allows, by the
// agent before every post and by the CLI (forward-flags.ts checkedTarget) when a target is set.
import type { LookupAddress, LookupOptions } from "node:dns";
import type { LookupFunction } from "node:net";
import { describe, expect, it } from "vitest";
import { networkInterfaces } from "node:os";
import { DEFAULT_API_PORT } from "../../local-agent/api/api-server.ts";
import { UsageError } from "../../local-agent/cli/cli-args.ts";
import { checkedTarget } from "../../local-agent/cli/forward-flags.ts";
import { guardedLookup, literalRefusal } from "../../local-agent/forward/address-guard.ts";
import { checkForwardTarget } from "../../protocol/index.ts";
import { createAppClient } from "../../local-agent/forward/app-client.ts";
import type { AppClient, AppRequest } from "../../local-agent/forward/app-client.ts";
import { waitUntil } from "../support/node/stack.ts";
import { runCli, tempHome } from "./cli-harness.ts";
import { forwardCleanups, forwardFrame, wiredLoop } from "./forward-app.ts";

const { cleanups, app, stopAfter } = forwardCleanups();

/** A resolver that answers `answers` in turn (the last one again after that), recording what it was asked. */
function fakeLookup(...answers: string[]): LookupFunction & { asked: string[] } {
  const asked: string[] = [];
  let next = 0;
  const lookup = (hostname: string, options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
    asked.push(hostname);
    const address = answers[Math.min(next++, answers.length - 1)]!;
    const family = address.includes(":") ? 6 : 4;
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  return Object.assign(lookup as LookupFunction, { asked });
}

function client(lookup?: LookupFunction, apiPort?: number): AppClient {
  const made = createAppClient({ ...(lookup ? { lookup } : {}), ...(apiPort !== undefined ? { apiPort: () => apiPort } : {}) });
  cleanups.push(() => made.close());
  return made;
}

function request(url: string, allowPublic = false): AppRequest {
  return { source: "shop", target: url, allowPublic, url, method: "POST", headers: [["content-type", "application/json"]], body: new TextEncoder().encode("{}") };
}

const FIX = "clawrelay sources set shop --forward";

describe("the address guard", () => {
  it("refuses a public IP literal without connecting, naming the fix", async () => {
    const answer = await client().post(request("http://8.8.8.8/webhooks"));
    expect(answer.kind).toBe("not_sent");
    expect(answer.kind === "not_sent" && answer.reason).toBe(`8.8.8.8 is a public address: the agent forwards only to loopback and private addresses unless the source allows a public target; if that app is yours, allow it: ${FIX} http://8.8.8.8/webhooks --allow-public-target`);
    expect(literalRefusal("[2001:4860:4860::8888]", "shop", "x")).not.toBeNull();
    for (const host of ["127.0.0.1", "[::1]", "localhost", "10.1.2.3", "192.168.1.9", "100.101.102.103", "[fd00::1]"]) expect(literalRefusal(host, "shop", "x")).toBeNull();
  });

  it("refuses a name that resolves to a public address, and lets one that resolves to loopback through", async () => {
    const shop = await app();
    const publicName = fakeLookup("8.8.8.8");
    const refused = await client(publicName).post(request(`http://hooks.example.com:${shop.port}/x`));
    expect(refused.kind).toBe("not_sent");
    expect(refused.kind === "not_sent" && refused.reason).toContain(`hooks.example.com resolves to 8.8.8.8, a public address`);
    expect(refused.kind === "not_sent" && refused.reason).toContain(`${FIX} http://hooks.example.com:${shop.port}/x --allow-public-target`);
    expect(publicName.asked).toEqual(["hooks.example.com"]);
    expect(shop.requests).toEqual([]);

    const local = await client(fakeLookup("127.0.0.1")).post(request(`http://app.internal:${shop.port}/x`));
    expect(local).toMatchObject({ kind: "answered", status: 200 });
    expect(shop.requests[0]!.rawHeaders.slice(0, 2)).toEqual(["host", `app.internal:${shop.port}`]);
  });

  it("regression: DNS rebinding — a name private at one connect and public at the next is refused at that connect", async () => {
    const shop = await app();
    // The app closes each connection, so every post resolves the name again.
    shop.script({ status: 200, headers: { connection: "close" } });
    const rebinding = fakeLookup("127.0.0.1", "8.8.8.8");
    const apps = client(rebinding);
    expect(await apps.post(request(`http://rebind.example:${shop.port}/x`))).toMatchObject({ kind: "answered", status: 200 });
    expect(await apps.post(request(`http://rebind.example:${shop.port}/x`))).toMatchObject({ kind: "not_sent" });
    expect(rebinding.asked).toEqual(["rebind.example", "rebind.example"]);
    expect(shop.requests).toHaveLength(1);
  });

  it("checks every address a name resolves to", () => {
    const results: (NodeJS.ErrnoException | null)[] = [];
    const both: LookupFunction = (_host, _options, callback) => callback(null, [{ address: "10.0.0.5", family: 4 }, { address: "1.1.1.1", family: 4 }]);
    guardedLookup("shop", "http://x/", both)("x", { all: true }, (err) => results.push(err));
    const privateOnly: LookupFunction = (_host, _options, callback) => callback(null, [{ address: "10.0.0.5", family: 4 }, { address: "fd12::1", family: 6 }]);
    guardedLookup("shop", "http://x/", privateOnly)("x", { all: true }, (err) => results.push(err));
    expect(results[0]?.message).toContain("x resolves to 1.1.1.1, a public address");
    expect(results[1]).toBeNull();
  });

  it("with --allow-public-target the name is resolved and used as it is (no guard)", async () => {
    const asked: string[] = [];
    // Answers with an error, so nothing is connected to: the post got past the guard to resolving.
    const failing: LookupFunction = (hostname, _options, callback) => {
      asked.push(hostname);
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "", 4);
    };
    const answer = await client(failing).post(request("http://public.example/x", true));
    expect(answer).toMatchObject({ kind: "unreachable", detail: expect.stringContaining("ENOTFOUND") });
    expect(asked).toEqual(["public.example"]);
  });

  it("regression: localhost is not trusted by its text — posted to only when it resolves to loopback here, whatever the source allows", async () => {
    const shop = await app();
    for (const [answer, allowPublic] of [["203.0.113.7", false], ["203.0.113.7", true], ["10.0.0.5", false]] as const) {
      const hosts = fakeLookup(answer);
      const refused = await client(hosts).post(request(`http://localhost:${shop.port}/x`, allowPublic));
      expect(refused.kind, answer).toBe("not_sent");
      expect(refused.kind === "not_sent" && refused.reason).toBe(
        `localhost resolves to ${answer} on this machine, not a loopback address: the agent posts to localhost only on loopback; fix this machine's hosts file (/etc/hosts), or point the source at the loopback address: clawrelay sources set shop --forward http://127.0.0.1:${shop.port}/x`,
      );
      expect(hosts.asked).toEqual(["localhost"]);
    }
    expect(shop.requests).toEqual([]);
    expect(await client(fakeLookup("127.0.0.1")).post(request(`http://localhost:${shop.port}/x`))).toMatchObject({ kind: "answered", status: 200 });
    expect(await client(fakeLookup("127.0.0.1")).post(request(`http://app.localhost:${shop.port}/x`))).toMatchObject({ kind: "answered", status: 200 });
    expect(shop.requests).toHaveLength(2);
  });

  it("0.0.0.0 and [::] are refused as targets when set (where a server listens, not a destination), naming the address to give; one already stored is still posted to", async () => {
    for (const host of ["0.0.0.0", "[::]", "[::ffff:0.0.0.0]"]) {
      const check = checkForwardTarget(`http://${host}:3000/hooks`, false);
      expect(check.ok, host).toBe(false);
      expect(!check.ok && check.problem).toBe(`${new URL(`http://${host}/`).hostname} is where a server listens ("every interface"), not an address to send to: give http://127.0.0.1:3000/hooks for an app on this machine, or the machine's own address`);
      await expect(checkedTarget(`http://${host}:3000/hooks`, true)).rejects.toThrow(UsageError);
      expect(checkForwardTarget(`http://${host}:3000/hooks`, false, { stored: true }).ok).toBe(true);
    }
    for (const host of ["0.0.0.1", "[::1]", "127.0.0.1"]) expect(checkForwardTarget(`http://${host}:3000/`, false).ok, host).toBe(true);
    const shop = await app();
    const wired = wiredLoop();
    stopAfter(wired.loop);
    wired.loop.push(forwardFrame(1, { target: `http://0.0.0.0:${shop.port}/hooks`, tail: "/a" }));
    await waitUntil("posted to the stored 0.0.0.0 target", () => shop.requests.length === 1);
  });

  it("a refused target's event goes to the dead shelf with the reason, and the source's next event is tried on its own", async () => {
    const wired = wiredLoop();
    stopAfter(wired.loop);
    wired.loop.push(forwardFrame(1, { target: "http://8.8.8.8/hooks", tail: "/a" }));
    await waitUntil("refused", () => wired.rejected.length === 1);
    expect(wired.rejected[0]).toMatchObject({ id: 1, rejection: { status: 0, attempts: 0, reason: expect.stringContaining(`${FIX} http://8.8.8.8/hooks --allow-public-target`) } });
    expect(wired.loop.forwards.status()[0]).toMatchObject({ source: "shop", rejected: 1, failing_since: null, last_error: expect.stringContaining("public address") });
  });
});

/** A non-loopback address of this machine's own interfaces, when it has one. */
const ownInterfaceAddress = Object.values(networkInterfaces())
  .flatMap((list) => list ?? [])
  .find((i) => !i.internal && i.family === "IPv4")?.address;

describe("the agent's own local API port", () => {
  it("is never posted to on this machine (loopback, localhost, 0.0.0.0, a name resolving there), whatever the source allows; the reason says what to do", async () => {
    // Stands in for the API: if a post got through, it would be seen here.
    const api = await app();
    const apps = client(fakeLookup("127.0.0.1"), api.port);
    for (const host of ["127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "0.0.0.0", "api.internal"]) {
      for (const allowPublic of [false, true]) {
        const answer = await apps.post(request(`http://${host}:${api.port}/clawrelay/status`, allowPublic));
        expect(answer.kind, host).toBe("not_sent");
        expect(answer.kind === "not_sent" && answer.reason).toContain(`:${api.port} is this machine's clawrelay local API`);
        expect(answer.kind === "not_sent" && answer.reason).toContain("clawrelay sources set shop --forward http://127.0.0.1:PORT/");
      }
    }
    expect(api.requests).toEqual([]);
    // Another port of the same machine is an ordinary target.
    const shop = await app();
    expect(await apps.post(request(`http://127.0.0.1:${shop.port}/x`))).toMatchObject({ kind: "answered", status: 200 });
  });

  it.skipIf(ownInterfaceAddress === undefined)("is refused at this machine's own network address too", async () => {
    const answer = await client(undefined, 45_999).post(request(`http://${ownInterfaceAddress}:45999/x`, true));
    expect(answer).toMatchObject({ kind: "not_sent", reason: expect.stringContaining("clawrelay local API") });
  });

  it(`refuses the default port (${DEFAULT_API_PORT}) on this machine even when the agent runs on another (another agent's API may be there)`, async () => {
    const answer = await client(undefined, 45_998).post(request(`http://127.0.0.1:${DEFAULT_API_PORT}/`));
    expect(answer).toMatchObject({ kind: "not_sent", reason: expect.stringContaining(`127.0.0.1:${DEFAULT_API_PORT} is this machine's clawrelay local API`) });
  });

  it("a refused delivery goes to the dead shelf with that reason", async () => {
    const wired = wiredLoop();
    stopAfter(wired.loop);
    wired.loop.push(forwardFrame(1, { target: `http://127.0.0.1:${DEFAULT_API_PORT}`, tail: "/clawrelay/status" }));
    await waitUntil("refused", () => wired.rejected.length === 1);
    expect(wired.rejected[0]).toMatchObject({ id: 1, rejection: { attempts: 0, reason: expect.stringContaining("clawrelay local API") } });
  });

  it("the CLI refuses it as a target: sources add|set --forward and listen PORT, a usage error naming it", async () => {
    for (const target of [`http://127.0.0.1:${DEFAULT_API_PORT}/`, `http://localhost:${DEFAULT_API_PORT}/x`, `http://[::1]:${DEFAULT_API_PORT}`]) {
      await expect(checkedTarget(target, false)).rejects.toThrow(UsageError);
      await expect(checkedTarget(target, true)).rejects.toThrow(/own local API/);
    }
    await expect(checkedTarget("http://127.0.0.1:4100/", false, "--forward", [4100])).rejects.toThrow(/127\.0\.0\.1:4100 is the clawrelay agent's own local API/);
    await expect(checkedTarget("http://127.0.0.1:3000/", false)).resolves.toEqual({ forward: "http://127.0.0.1:3000/", allowPublic: false });

    const home = await tempHome();
    cleanups.push(() => home.cleanup());
    const listen = await runCli(["listen", String(DEFAULT_API_PORT)], home.env);
    expect(listen.code).toBe(2);
    expect(listen.stderr).toContain(`127.0.0.1:${DEFAULT_API_PORT} is the clawrelay agent's own local API`);
    const add = await runCli(["sources", "add", "app", "--kind", "token", "--forward", `http://localhost:${DEFAULT_API_PORT}/hooks`], home.env);
    expect(add.code).toBe(2);
    expect(add.stderr).toContain("own local API (status, messages, retry and the inspector), never a forward target");
  });
});
