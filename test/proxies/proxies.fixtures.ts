import { Controller, Get, type ExecutionContext } from '@nestjs/common';
import { clientAddress, RateLimit } from 'nestjs-holdup';

type HttpRequest = { headers: Record<string, string | undefined> };
const headerOf = (context: ExecutionContext, name: string) =>
  context.switchToHttp().getRequest<HttpRequest>().headers[name];

/** Burst 2, no refill within a test: the third request of one bucket is denied. */
const LIMIT = { rate: '1/min', burst: 2 } as const;

@Controller('proxied')
export class ProxiedController {
  /** The client address (the default key). */
  @RateLimit(LIMIT)
  @Get('ip')
  ip() {
    return { ok: true };
  }

  /** A header that carries an address (what a proxy writes). */
  @RateLimit({ ...LIMIT, key: 'header:x-real-ip' })
  @Get('real-ip')
  realIp() {
    return { ok: true };
  }

  /** A key function answering an address (`X-Client`, as an application might read it from a session). */
  @RateLimit({ ...LIMIT, key: (context) => headerOf(context, 'x-client') })
  @Get('fn')
  fn() {
    return { ok: true };
  }

  /** A key function combining a tenant with the client address as the module sees it. */
  @RateLimit({ ...LIMIT, key: (context) => `acme:${clientAddress(context)}` })
  @Get('acme')
  acme() {
    return { ok: true };
  }

  /** The client address first, then a tenant (`X-Tenant`): one bucket per tenant and address. */
  @RateLimit({
    ...LIMIT,
    key: (context) => `${clientAddress(context)}:${headerOf(context, 'x-tenant')}`,
  })
  @Get('address-tenant')
  addressTenant() {
    return { ok: true };
  }
}
