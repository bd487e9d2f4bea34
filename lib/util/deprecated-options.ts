/** The release that removes the names renamed in 0.2.0. */
export const DEPRECATED_NAMES_REMOVED_IN = '0.3.0';

/** How many places one warning lists before it says how many more there are. */
const MAX_PLACES = 10;

interface DeprecatedUse {
  readonly replacement: string;
  readonly places: string[];
  /** The declarations already noted (a module or class limit reaches every route it applies to). */
  readonly declarations: WeakSet<object>;
  said: boolean;
}

/**
 * The deprecated option names an application uses, said once each in the
 * log: collected while the module starts (its options, then every route's
 * limits) and said by {@link flush}, one warning per old name with the new
 * name and the places that use it. A name first met after that (a handler
 * compiled on its first call) is said at once, and also only once.
 *
 * @internal
 */
export class DeprecatedOptions {
  private readonly uses = new Map<string, DeprecatedUse>();
  private flushed = false;

  constructor(private readonly warn: (message: string) => void) {}

  /**
   * `option` (as written: `isFailure`, `adaptive.isFailure`, `hotKeys.windowMs`)
   * is used at `where`; `replacement` is its new name. `declaration`, the
   * object that carries it, lists a limit merged into many routes once.
   */
  note(option: string, replacement: string, where: string, declaration?: object): void {
    let use = this.uses.get(option);
    if (use === undefined) {
      use = { replacement, places: [], declarations: new WeakSet(), said: false };
      this.uses.set(option, use);
    }
    if (use.said) return;
    if (declaration !== undefined) {
      if (use.declarations.has(declaration)) return;
      use.declarations.add(declaration);
    }
    if (!use.places.includes(where)) use.places.push(where);
    if (this.flushed) this.say(option, use);
  }

  /** Say every deprecated name noted so far, once each; later ones are said as they come. */
  flush(): void {
    this.flushed = true;
    for (const [option, use] of this.uses) if (!use.said) this.say(option, use);
  }

  private say(option: string, use: DeprecatedUse): void {
    use.said = true;
    const shown = use.places.slice(0, MAX_PLACES).join('; ');
    const more =
      use.places.length > MAX_PLACES ? ` (and ${use.places.length - MAX_PLACES} more)` : '';
    this.warn(
      `RateLimitModule: ${option} is deprecated, use ${use.replacement} instead (same meaning); ` +
        `${option} still works in 0.2.x and will be removed in ${DEPRECATED_NAMES_REMOVED_IN}. Used by: ${shown}${more}. (Said once.)`,
    );
  }
}
