/** The `events` module option. */
export interface RateLimitEventsOptions {
  /**
   * Also emit every event on `@nestjs/event-emitter`'s `EventEmitter2`, as
   * `rate-limit.<type>` (`rate-limit.denied`, `rate-limit.fallback-entered`, ...).
   * The package must be installed and `EventEmitterModule.forRoot()` imported:
   * otherwise the bootstrap fails. @default false
   */
  readonly eventEmitter?: boolean;
}

/** The `events` option after validation. @internal */
export interface ResolvedEventsOptions {
  readonly eventEmitter: boolean;
}
