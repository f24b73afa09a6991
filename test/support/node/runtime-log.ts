// What workerd itself prints when the relay resets an inbox on purpose (ctx.abort("clawrelay: …"),
// worker/delivery/socket-limits.ts): "uncaught exception; … broken.outputGateBroken; jsg.Error: clawrelay:
// …" and a "stack:" line, which the Workers pool writes to this process's stdout (the runtime logs it at
// "info"), outside any test. Held
// here instead: a workerd test that provokes the reset takes its line through the stand-in hub
// (GET /__test/runtime-log, standin-hub.ts) and asserts it; a line no test took is printed when the run
// ends, so an unexpected reset still shows. Installed by hub-global-setup.ts for the workerd project.

/** The runtime's report of a reset the relay asked for: its reason is "clawrelay: …". */
const RELAY_RESET = /broken\.outputGateBroken; jsg\.Error: clawrelay: /;

export interface RuntimeLog {
  /** The held reports whose text matches `pattern`, removed from the hold. */
  take(pattern: RegExp): string[];
  /** Puts stderr back and prints what no test took. */
  restore(): void;
}

export function holdRelayResets(streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): RuntimeLog {
  const held: { text: string; stream: NodeJS.WriteStream }[] = [];
  const originals = streams.map((stream) => {
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    let stackOf: number | null = null;
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
      if (RELAY_RESET.test(text)) {
        stackOf = held.push({ text, stream }) - 1;
        return true;
      }
      // The runtime's "stack:" line of the report just held, when it comes as a write of its own.
      if (stackOf !== null && text.startsWith("stack: ")) {
        held[stackOf]!.text += text;
        stackOf = null;
        return true;
      }
      stackOf = null;
      return write(chunk, ...rest);
    }) as typeof stream.write;
    return { stream, write };
  });
  return {
    take: (pattern) => {
      const taken = held.filter(({ text }) => pattern.test(text));
      for (const entry of taken) held.splice(held.indexOf(entry), 1);
      return taken.map(({ text }) => text);
    },
    restore: () => {
      for (const { stream, write } of originals) stream.write = write as typeof stream.write;
      for (const { text, stream } of held.splice(0)) stream.write(text);
    },
  };
}
