// Lanes (protocol/lanes.ts): which lane a message is in, and what share of a window one lane may hold.
import { describe, expect, it } from "vitest";
import { conversationKey, laneOf, laneShare, parseClientFrame, sourceLane } from "../../protocol/index.ts";

describe("laneOf", () => {
  it("puts a source's events in the source's lane, whatever their target", () => {
    expect(laneOf({ source: "stripe" })).toBe("source:stripe");
    expect(sourceLane("gh")).toBe("source:gh");
  });

  it("puts every other message in its gateway conversation", () => {
    const hook = { sessionKey: "hook:ci", subpath: "ci" };
    expect(laneOf(hook)).toBe(conversationKey(hook));
    expect(laneOf({ sessionKey: null, subpath: "alerts" })).toBe("subpath:alerts");
  });
});

describe("laneShare", () => {
  it("gives an ordered lane a quarter of the window and an unordered one half, never less than one", () => {
    expect(laneShare(16, true)).toBe(4);
    expect(laneShare(16, false)).toBe(8);
    expect(laneShare(1, true)).toBe(1);
    expect(laneShare(6, true)).toBe(2);
  });
});

describe("the auth frame's features", () => {
  it("are kept when they are a short list of strings", () => {
    expect(parseClientFrame(JSON.stringify({ type: "auth", key: "k", signature: "s", features: ["lanes"] }))).toMatchObject({ features: ["lanes"] });
  });

  it("refuse the frame when they are anything else", () => {
    for (const features of ["lanes", [1], Array(33).fill("x"), ["x".repeat(65)]]) {
      expect(parseClientFrame(JSON.stringify({ type: "auth", key: "k", signature: "s", features }))).toBeNull();
    }
  });
});
