// Forward targets (protocol/forward.ts): which addresses are loopback, private or public; which targets
// the owner may set; how a token source's URL tail joins the target; which of the sender's headers a
// forwarded event keeps.
import { describe, expect, it } from "vitest";
import { addressClass, checkForwardTarget, forwardUrl, keptRequestHeaders } from "../../protocol/index.ts";

describe("addressClass", () => {
  it.each([
    ["127.0.0.1", "loopback"], ["127.255.0.9", "loopback"], ["0.0.0.0", "loopback"], ["localhost", "loopback"], ["app.localhost", "loopback"],
    ["::1", "loopback"], ["[::1]", "loopback"], ["0:0:0:0:0:0:0:1", "loopback"], ["::ffff:127.0.0.1", "loopback"],
    ["10.1.2.3", "private"], ["172.16.0.1", "private"], ["172.31.255.255", "private"], ["192.168.1.20", "private"], ["100.100.1.1", "private"],
    ["fd12:3456::1", "private"], ["fc00::", "private"], ["::ffff:192.168.0.1", "private"], ["[fd00::1%eth0]", "private"],
    ["8.8.8.8", "public"], ["172.32.0.1", "public"], ["169.254.169.254", "public"], ["100.128.0.1", "public"], ["2001:db8::1", "public"],
    ["fe80::1", "public"], ["::ffff:8.8.8.8", "public"],
  ])("%s is %s", (address, expected) => {
    expect(addressClass(address)).toBe(expected);
  });

  it.each(["example.com", "my-laptop.local", "256.1.1.1", "1.2.3", "::1::2", "12345::", "1:2:3:4:5:6:7:8:9"])("%s is not an IP literal: null", (address) => {
    expect(addressClass(address)).toBeNull();
  });
});

describe("checkForwardTarget", () => {
  it("takes loopback, private and named targets and normalizes them", () => {
    expect(checkForwardTarget("http://127.0.0.1:3000/webhooks", false)).toEqual({ ok: true, url: "http://127.0.0.1:3000/webhooks", host: "127.0.0.1", hostClass: "loopback" });
    expect(checkForwardTarget("http://[::1]:8080", false)).toMatchObject({ ok: true, url: "http://[::1]:8080/", hostClass: "loopback" });
    expect(checkForwardTarget("https://192.168.1.9/hook?x=1", false)).toMatchObject({ ok: true, hostClass: "private" });
    expect(checkForwardTarget("http://devbox.lan:3000", false)).toMatchObject({ ok: true, hostClass: null });
  });

  it("refuses a public IP without allowPublic and takes it with", () => {
    const refused = checkForwardTarget("http://8.8.8.8/hook", false);
    expect(refused.ok).toBe(false);
    expect(refused.ok ? "" : refused.problem).toMatch(/--allow-public-target/);
    expect(checkForwardTarget("http://8.8.8.8/hook", true)).toMatchObject({ ok: true, hostClass: "public" });
  });

  it.each([
    ["ftp://127.0.0.1/x", /http:\/\/ or https:\/\//],
    ["http://user:pw@127.0.0.1/", /user name or password/],
    ["http://127.0.0.1/#frag", /fragment/],
    ["not a url", /not a URL/],
    ["", /at most/],
    [`http://127.0.0.1/${"a".repeat(2100)}`, /at most/],
  ])("refuses %s", (value, problem) => {
    const check = checkForwardTarget(value, true);
    expect(check.ok).toBe(false);
    expect(check.ok ? "" : check.problem).toMatch(problem);
  });
});

describe("forwardUrl", () => {
  it.each([
    ["http://127.0.0.1:3000", "", "http://127.0.0.1:3000/"],
    ["http://127.0.0.1:3000", "/stripe/events?x=1", "http://127.0.0.1:3000/stripe/events?x=1"],
    ["http://127.0.0.1:3000/", "/stripe/events", "http://127.0.0.1:3000/stripe/events"],
    ["http://127.0.0.1:3000/prefix", "/a/b", "http://127.0.0.1:3000/prefix/a/b"],
    ["http://127.0.0.1:3000/prefix/", "?x=1&y=2", "http://127.0.0.1:3000/prefix?x=1&y=2"],
    ["http://127.0.0.1:3000/hook?token=t", "/more?x=1", "http://127.0.0.1:3000/hook/more?token=t&x=1"],
    ["http://127.0.0.1:3000", "/a%20b/c", "http://127.0.0.1:3000/a%20b/c"],
  ])("%s + %s = %s", (target, tail, expected) => {
    expect(forwardUrl(target, tail)).toBe(expected);
  });

  it.each(["/../admin", "/a/%2e%2e/b", "/a%2Fb", "/a/./b", "relative", "/a#frag"])("refuses the tail %s", (tail) => {
    expect(forwardUrl("http://127.0.0.1:3000/prefix", tail)).toBeNull();
  });
});

describe("keptRequestHeaders", () => {
  it("keeps the sender's headers in order and drops hop-by-hop ones and those added on the way", () => {
    const kept = keptRequestHeaders([
      ["Content-Type", "application/json"],
      ["Stripe-Signature", "t=1,v1=ab"],
      ["Host", "relay.example"],
      ["Content-Length", "12"],
      ["Connection", "keep-alive, X-Hop"],
      ["X-Hop", "1"],
      ["Transfer-Encoding", "chunked"],
      ["CF-Connecting-IP", "203.0.113.9"],
      ["CF-Ray", "x"],
      ["X-Forwarded-For", "203.0.113.9"],
      ["X-Real-IP", "203.0.113.9"],
      ["CDN-Loop", "cloudflare"],
      ["Accept-Encoding", "gzip"],
      ["X-Clawrelay-Source", "forged"],
      ["Authorization", "Bearer app-token"],
      ["User-Agent", "Stripe/1.0"],
    ]);
    expect(kept).toEqual({
      ok: true,
      headers: [["content-type", "application/json"], ["stripe-signature", "t=1,v1=ab"], ["authorization", "Bearer app-token"], ["user-agent", "Stripe/1.0"]],
    });
  });

  it("refuses more than 64 headers or 16 KiB of them, saying the limits", () => {
    const many = Array.from({ length: 65 }, (_, i): [string, string] => [`x-h${i}`, "v"]);
    const tooMany = keptRequestHeaders(many);
    expect(tooMany.ok ? "" : tooMany.problem).toMatch(/at most 64 headers/);
    const big = keptRequestHeaders([["x-big", "v".repeat(17 * 1024)]]);
    expect(big.ok).toBe(false);
    expect(keptRequestHeaders([["x-ok", "v".repeat(15 * 1024)]]).ok).toBe(true);
  });
});
