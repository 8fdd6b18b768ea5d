// Waiting on a condition instead of a fixed time: the test goes on as soon as the condition holds,
// and a condition that never holds fails with what was awaited.

/**
 * Resolves once `condition` is true (it is checked at once, then every `intervalMs`); throws
 * "timed out after N ms waiting for <what>" when it is still false after `timeoutMs`.
 */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000, intervalMs = 20): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() >= end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
