/** What the isolation benches share: per-call round-trip samples, and a client for a bare echo floor. */

/**
 * Calls each variant `perRound` times per round, the variants taking turns, so machine noise lands
 * on all of them (with `perRound` 1, call by call); returns per-call µs samples, the first
 * `warmupRounds` rounds left out.
 */
export async function roundTripSamples(
  variants: Record<string, () => Promise<unknown>>,
  rounds: number,
  perRound = 250,
  warmupRounds = 4,
): Promise<Record<string, number[]>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, call] of Object.entries(variants)) {
      for (let i = 0; i < perRound; i++) {
        const t0 = process.hrtime.bigint();
        await call();
        if (round >= warmupRounds) samples[name]!.push(Number(process.hrtime.bigint() - t0) / 1000);
      }
    }
  }
  return samples;
}

/** Request/reply over a channel that echoes: each request gets an id, each reply settles its request, as a runner must match them. */
export function echoClient(
  send: (message: { id: number; message: unknown }) => void,
  onReply: (listener: (reply: { id: number }) => void) => void,
): (message: unknown) => Promise<unknown> {
  const pending = new Map<number, (reply: unknown) => void>();
  let next = 0;
  onReply((reply) => {
    pending.get(reply.id)?.(reply);
    pending.delete(reply.id);
  });
  return (message) =>
    new Promise<unknown>((resolve) => {
      const id = ++next;
      pending.set(id, resolve);
      send({ id, message });
    });
}
