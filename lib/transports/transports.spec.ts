import {
  BadRequestException,
  HttpStatus,
  ServiceUnavailableException,
  type ExecutionContext,
  type HttpServer,
} from '@nestjs/common';
import { RateLimitExceededException } from '../errors/rate-limit-exceeded.exception.js';
import { GraphqlTransport } from './graphql.transport.js';
import { HeaderlessTransport } from './headerless.transport.js';
import { HttpTransport } from './http.transport.js';

/** An execution context with just what the transports read. */
const contextOf = (
  http: { req?: unknown; res?: unknown },
  // An HTTP context's arguments are its request and response, as Nest passes them.
  args: unknown[] = [http.req, http.res],
): ExecutionContext =>
  ({
    switchToHttp: () => ({ getRequest: () => http.req, getResponse: () => http.res }),
    getArgByIndex: (i: number) => args[i],
  }) as unknown as ExecutionContext;

describe('transports', () => {
  const headers: [unknown, string, string][] = [];
  const adapter = {
    setHeader: (res: unknown, name: string, value: string) => headers.push([res, name, value]),
  } as unknown as HttpServer;
  const source = {
    limits: [{ name: 'a', rate: 1, burst: 2 }],
    decisions: [{ allowed: false, remaining: 0, retryAfterMs: 1500, resetMs: 2000 }],
    policy: undefined,
  };
  beforeEach(() => (headers.length = 0));

  it('HTTP: request and response from the context, headers through the adapter, 429 and 503', () => {
    const http = new HttpTransport(() => adapter);
    const res = { statusCode: 200 };
    expect(http.requestResponse(contextOf({ req: 'req', res }))).toEqual({
      request: 'req',
      response: res,
    });
    http.writeHeaders(res, 'draft', source, 2);
    expect(headers.map(([, name]) => name)).toEqual([
      'ratelimit-policy',
      'ratelimit',
      'retry-after',
    ]);
    const denial = http.denialError({ ...source, retryAfter: 2 });
    expect(denial).toBeInstanceOf(RateLimitExceededException);
    expect((denial as RateLimitExceededException).getStatus()).toBe(HttpStatus.TOO_MANY_REQUESTS);
    expect((http.denialError({ ...source, retryAfter: undefined }) as Error).message).toBe(
      'Request cost exceeds the rate limit burst',
    );
    expect(http.unavailableError()).toBeInstanceOf(ServiceUnavailableException);
  });

  it("HTTP: the 429 is made without a stack trace (a denial is an answer, and capturing one cost a third of it), and the process's stackTraceLimit is left as it was", () => {
    const http = new HttpTransport(() => adapter);
    const before = Error.stackTraceLimit;
    const denial = http.denialError({ ...source, retryAfter: 2 });
    expect(denial.stack).toBe('RateLimitExceededException: Too Many Requests');
    expect(Error.stackTraceLimit).toBe(before);
    // Other errors keep their frames.
    expect(new Error('other').stack).toMatch(/\n\s+at /);
  });

  it('HTTP: a failure is a 5xx status or a thrown error that is not a 4xx HttpException', () => {
    const http = new HttpTransport(() => adapter);
    expect(http.failed({ statusCode: 200 }, undefined)).toBe(false);
    expect(http.failed({ statusCode: 503 }, undefined)).toBe(true);
    expect(http.failed(undefined, undefined)).toBe(false);
    expect(http.failed({}, new BadRequestException())).toBe(false);
    expect(http.failed({}, new ServiceUnavailableException())).toBe(true);
    expect(http.failed({}, new Error('bug'))).toBe(true);
  });

  it('HTTP: no adapter (yet) or no response writes nothing', () => {
    new HttpTransport(() => undefined).writeHeaders({}, 'draft', source, 1);
    new HttpTransport(() => adapter).writeHeaders(undefined, 'draft', source, 1);
    expect(headers).toEqual([]);
  });

  it('GraphQL: the HTTP request and response from the GraphQL context (Apollo and Mercurius shapes)', () => {
    const graphql = new GraphqlTransport(() => adapter, 'draft');
    expect(graphql.type).toBe('graphql');
    // Apollo's default context holds only the request: Express links the response to it.
    const req = { res: 'express-res' };
    expect(graphql.requestResponse(contextOf({}, [{}, {}, { req }]))).toEqual({
      request: req,
      response: 'express-res',
    });
    expect(graphql.requestResponse(contextOf({}, [{}, {}, { req: 'req', res: 'res' }]))).toEqual({
      request: 'req',
      response: 'res',
    });
    expect(
      graphql.requestResponse(contextOf({}, [{}, {}, { request: 'rq', reply: 'rp' }])),
    ).toEqual({ request: 'rq', response: 'rp' });
    expect(graphql.requestResponse(contextOf({}, []))).toEqual({
      request: undefined,
      response: undefined,
    });
  });

  it('other contexts: no request, no response, no headers', () => {
    const ws = new HeaderlessTransport('ws');
    expect(ws.type).toBe('ws');
    expect(ws.requestResponse(contextOf({ req: 'req', res: 'res' }))).toEqual({
      request: undefined,
      response: undefined,
    });
    ws.writeHeaders({}, 'draft', source, 1);
    expect(headers).toEqual([]);
  });
});
