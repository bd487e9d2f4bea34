import type { KeyStrategy } from '../interfaces/rate-limit-options.interface.js';
import type { RequestAddress } from '../interfaces/request-address.interface.js';

/** What a limit needs from its surroundings to be resolved. */
export interface LimitContext {
  /** Names the place the limit was declared, for error messages (`OrdersController.search`). */
  readonly where: string;
  /** Route identity used in bucket keys when the limit is route-scoped. */
  readonly routeId: string;
  readonly defaultKey: KeyStrategy;
  /** The client address as the module sees it. */
  readonly address: RequestAddress;
  readonly ipv6Subnet: number;
  /** Where what must be said once (not per request) is said: the module's logger. */
  readonly warn: (message: string) => void;
  /** The store can decide locally when its backend fails (allows `failMode: 'local'`). */
  readonly localFallback: boolean;
  /** The module's `shadow`: a limit's default. */
  readonly shadow?: boolean;
  /** The store can block a bucket (allows `blockDuration`). */
  readonly storeBlocks?: boolean;
  /** The store can settle reservations (allows `settle`). */
  readonly storeSettles?: boolean;
  /** The store has concurrency slots (allows `concurrency`). */
  readonly storeSlots?: boolean;
  /**
   * A deprecated option name is in use (`isFailure`, `adaptive.isFailure`):
   * said once at start-up with its new name and where (`limit`, the limit's
   * name; `declaration`, the options object carrying it). Not set: said nowhere.
   */
  readonly deprecated?: (
    option: string,
    replacement: string,
    limit: string,
    declaration: object,
  ) => void;
}

/** Refuses an option of a limit, naming it: `fail('burst', 'must be at least 1')`. Throws. */
export type OptionFail = (option: string, problem: string) => never;
