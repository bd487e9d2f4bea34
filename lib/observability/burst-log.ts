/** What a burst log says: at the first occurrence of a burst, and with the count when it ends. */
export interface BurstMessages {
  /** Said at once, on the first occurrence after a quiet period. */
  readonly first: string;
  /** Said when the burst ends (or the log is flushed), with how many occurrences it had. */
  readonly summary: (count: number) => string;
}

/**
 * Occurrences that must not go unsaid but must not flood the log either
 * (refused events, would-be denials of a shadow limit): the first of a burst
 * is said at once, the rest are counted, and the count is said when the
 * burst ends, `quietMs` after its first occurrence (one `unref()`'d timer per
 * burst, not per occurrence) or when the log is flushed at shutdown. Bounded:
 * one entry per open burst, keyed by something of the application's own
 * (a handler, a limit name), never by a caller.
 *
 * @internal
 */
export class BurstLog {
  private readonly bursts = new Map<
    string,
    { count: number; timer: ReturnType<typeof setTimeout>; messages: BurstMessages }
  >();

  constructor(private readonly say: (message: string) => void) {}

  /** One occurrence for `key`; `messages` is only read at the first of a burst. */
  occurred(key: string, quietMs: number, messages: () => BurstMessages): void {
    const burst = this.bursts.get(key);
    if (burst) {
      burst.count++;
      return;
    }
    const said = messages();
    this.say(said.first);
    const timer = setTimeout(
      () => {
        const ended = this.bursts.get(key);
        this.bursts.delete(key);
        if (ended) this.say(ended.messages.summary(ended.count));
      },
      Math.max(1000, quietMs),
    );
    timer.unref();
    this.bursts.set(key, { count: 1, timer, messages: said });
  }

  /** Say the counts of the bursts still open, and stop their timers (the module is shutting down). */
  flush(): void {
    for (const { count, timer, messages } of this.bursts.values()) {
      clearTimeout(timer);
      this.say(messages.summary(count));
    }
    this.bursts.clear();
  }
}
