/**
 * Waits until `condition` holds, checking every 5 ms of real time; throws
 * when it still does not after `timeoutMs`. For what the code under test
 * does on its own schedule (a handler reached, a slot given back), in place
 * of a sleep that a loaded machine can outlast.
 */
export async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
