import type { HttpServer } from '@nestjs/common';

/** What transports get from the module. @internal */
export interface TransportHost {
  /** The HTTP adapter, once there is one (it may be set after the module is built). */
  readonly adapter: () => HttpServer | undefined;
  /** Says something once (the module's logger). */
  readonly warn: (message: string) => void;
  /** The module's `trustProxy` is set: transports that cannot read forwarded addresses say so. */
  readonly trustsProxies: boolean;
}
