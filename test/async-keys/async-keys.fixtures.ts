import { Controller, Get, type ExecutionContext } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';

type HttpRequest = { headers: Record<string, string | undefined> };
const headerOf = (context: ExecutionContext, name: string) =>
  context.switchToHttp().getRequest<HttpRequest>().headers[name];

/** Burst 2, no refill within a test: the third request of one bucket is denied. */
const LIMIT = { rate: '1/min', burst: 2 } as const;

/** Stand-in for a session store: answers on a later turn of the event loop, as a database would. */
const SESSIONS = new Map([
  ['token-a', 'alice'],
  ['token-b', 'bob'],
]);
export const lookUpSession = (token: string | undefined): Promise<string | undefined> =>
  new Promise((resolve) =>
    setImmediate(() => resolve(token === undefined ? undefined : SESSIONS.get(token))),
  );

/** The user behind `X-Session`, looked up asynchronously (undefined, so the client address, without a session). */
export const sessionKey = async (context: ExecutionContext): Promise<string | undefined> => {
  await Promise.resolve();
  return lookUpSession(headerOf(context, 'x-session'));
};

/** A key function answering `value` (cast: the type forbids what some tests answer on purpose). */
const answering = (value: () => unknown) => value as () => string;

@Controller('async-keys')
export class AsyncKeysController {
  @RateLimit({ ...LIMIT, key: sessionKey })
  @Get('session')
  session() {
    return { ok: true };
  }

  /** A synchronous key before and after the asynchronous one: each limit keeps its own key, in order. */
  @RateLimit([
    { name: 'per-ip', rate: '1/min', burst: 10 },
    { name: 'per-session', ...LIMIT, key: sessionKey },
    { name: 'per-tenant', rate: '1/min', burst: 10, key: 'header:x-tenant' },
  ])
  @Get('mixed')
  mixed() {
    return { ok: true };
  }

  /** The session store is down: the key promise rejects. */
  @RateLimit({
    ...LIMIT,
    key: async () => {
      await lookUpSession(undefined);
      throw new Error('session store unavailable');
    },
  })
  @Get('rejected')
  rejected() {
    return { ok: true };
  }

  /** A key function answering an object (a user instead of its id): one bucket for everyone if it were accepted. */
  @RateLimit({ ...LIMIT, key: answering(() => ({ id: 'alice' })) })
  @Get('object')
  object() {
    return { ok: true };
  }

  @RateLimit({ ...LIMIT, key: answering(async () => ({ id: 'alice' })) })
  @Get('async-object')
  asyncObject() {
    return { ok: true };
  }

  /** Synchronous keys only ('ip', a header). */
  @RateLimit([
    { name: 'per-ip', ...LIMIT },
    { name: 'per-tenant', rate: '1/min', burst: 10, key: 'header:x-tenant' },
  ])
  @Get('sync')
  sync() {
    return { ok: true };
  }
}
