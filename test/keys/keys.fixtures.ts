import {
  Controller,
  Get,
  Injectable,
  Req,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { MemoryStore, RateLimit, SkipRateLimit } from 'nestjs-holdup';
import type { ConsumeRequest, ConsumeResult } from 'nestjs-holdup/store';

/** A MemoryStore that records the bucket keys it is asked to charge. */
export class RecordingStore extends MemoryStore {
  readonly keys: string[] = [];

  override consume(request: ConsumeRequest): ConsumeResult {
    for (const check of request.checks) this.keys.push(check.key);
    return super.consume(request);
  }

  /** The last `n` keys recorded. */
  last(n = 1): string[] {
    return this.keys.slice(-n);
  }
}

type HttpRequest = {
  headers: Record<string, string | undefined>;
  query: Record<string, string | undefined>;
};
const requestOf = (context: ExecutionContext) => context.switchToHttp().getRequest<HttpRequest>();

const LIMIT = { rate: '1/min', burst: 2 } as const;

@Controller('keys')
export class KeysController {
  /** What the platform reports as the peer address. */
  @SkipRateLimit()
  @Get('socket')
  socket(@Req() request: { socket: { remoteAddress?: string } }) {
    return { remoteAddress: request.socket.remoteAddress };
  }

  /** No key given: the module `defaults.key` (else 'ip'). */
  @RateLimit({ name: 'route', ...LIMIT })
  @Get('default-key')
  defaultKey() {
    return { ok: true };
  }
  /** Default key: the client address. */
  @RateLimit(LIMIT)
  @Get('ip')
  ip() {
    return { ok: true };
  }

  @RateLimit({ ...LIMIT, key: 'header:X-Api-Key' })
  @Get('header')
  header() {
    return { ok: true };
  }

  @RateLimit({ ...LIMIT, key: 'global' })
  @Get('global')
  global() {
    return { ok: true };
  }

  /** `X-Tenant` when present, else undefined (falls back to the address). */
  @RateLimit({ ...LIMIT, key: (context) => requestOf(context).headers['x-tenant'] })
  @Get('fn')
  fn() {
    return { ok: true };
  }

  /** The raw `?k=` query value (decoded: may carry NUL bytes, unicode...). */
  @RateLimit({ ...LIMIT, key: (context) => requestOf(context).query.k })
  @Get('raw')
  raw() {
    return { ok: true };
  }

  /** A key function returning a number, or a huge string derived from `?big=`. */
  @RateLimit({
    ...LIMIT,
    key: (context) => {
      const { big, n } = requestOf(context).query;
      if (big !== undefined) return big.repeat(1_000_000);
      return n === undefined ? null : Number(n);
    },
  })
  @Get('computed')
  computed() {
    return { ok: true };
  }
}

/**
 * Stand-in authentication, registered as an APP_GUARD before RateLimitGuard:
 * `Authorization: Bearer <id>` sets `req.user = { id }`, `X-Sub: <sub>` sets `req.user = { sub }`,
 * `X-Empty-User: 1` sets `req.user = {}`.
 */
@Injectable()
export class FakeAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<HttpRequest & { user?: object }>();
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '');
    if (bearer) request.user = { id: bearer[1] };
    else if (request.headers['x-sub']) request.user = { sub: request.headers['x-sub'] };
    else if (request.headers['x-empty-user']) request.user = {};
    return true;
  }
}

@Controller('user')
export class UserKeyController {
  @RateLimit({ ...LIMIT, key: 'user' })
  @Get()
  user() {
    return { ok: true };
  }
}
