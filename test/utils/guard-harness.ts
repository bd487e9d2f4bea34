/**
 * RateLimitGuard and RateLimitInterceptor without an HTTP server: a real Nest
 * testing module (`RateLimitModule.forRoot()` on a `MemoryStore`, time on a
 * `ManualClock`), initialised with `moduleRef.init()`, and hand-made HTTP
 * execution contexts. Fast and deterministic: no sockets, no sleeping.
 *
 * Only the library's public API (`nestjs-holdup`) and Nest's: the guard's
 * internals may change freely under these tests.
 *
 * Headers: the library writes them through Nest's HTTP adapter
 * (`HttpAdapterHost.httpAdapter.setHeader(response, …)`), which a module
 * initialised without an application does not have; the harness gives it
 * Nest's Express adapter (no server is created or listened on), whose
 * `setHeader` calls the response's `set`. The fake response records what is
 * set on it through any of Express's `set`/`header`, Fastify's `header` or
 * Node's `setHeader`.
 *
 * ```ts
 * const h = await createGuardHarness(MyController, { defaults: { rate: 1 } });
 * expect(await h.canActivate('index')).toMatchObject({ allowed: true, headers: { ratelimit: '"default";r=0;t=1' } });
 * h.clock.advance(1000);
 * await h.close();
 * ```
 */
import { EventEmitter } from 'node:events';
import { HttpException, type CallHandler, type ExecutionContext, type Type } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test, type TestingModule } from '@nestjs/testing';
import { defer, from, isObservable, lastValueFrom, of, type Observable } from 'rxjs';
import {
  ManualClock,
  MemoryStore,
  RateLimitGuard,
  RateLimitInterceptor,
  RateLimitModule,
  type RateLimitModuleOptions,
} from 'nestjs-holdup';

/** Where the harness' clock starts: a realistic epoch time (window algorithms align on it). */
export const HARNESS_START = 1_700_000_000_000;

/** What a fake request is made of; everything optional. */
export interface FakeRequestInit {
  /** The client address (`req.ip` and the socket's). @default '203.0.113.1' */
  readonly ip?: string;
  /** Lower-case names, as Node gives them. */
  readonly headers?: Record<string, string | string[] | undefined>;
  readonly method?: string;
  readonly url?: string;
  readonly query?: Record<string, string | undefined>;
  /** `req.user`, for `key: 'user'`. */
  readonly user?: unknown;
}

/** An Express/Fastify-like request, as far as the library reads one. */
export interface FakeRequest {
  ip: string;
  method: string;
  url: string;
  originalUrl: string;
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, string | undefined>;
  socket: { remoteAddress: string };
  user?: unknown;
  [key: string | symbol]: unknown;
}

/** Builds a request; pass the same one to `canActivate` and `intercept` to make them one call. */
export function fakeRequest(init: FakeRequestInit = {}): FakeRequest {
  const ip = init.ip ?? '203.0.113.1';
  const url = init.url ?? '/';
  return {
    ip,
    method: init.method ?? 'GET',
    url,
    originalUrl: url,
    headers: { ...init.headers },
    query: { ...init.query },
    socket: { remoteAddress: ip },
    ...(init.user === undefined ? {} : { user: init.user }),
  };
}

/**
 * A response that records its headers (names lower-cased, as a client sees
 * them), whatever the platform's way of setting them: Express `res.set()` /
 * `res.header()`, Fastify `reply.header()`, Node `res.setHeader()`. It is
 * also the Node response the library watches for a client that goes away:
 * {@link FakeResponse.abort} closes it before it was sent.
 */
export class FakeResponse extends EventEmitter {
  readonly headers: Record<string, string> = {};
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  /** Node's `closed`: set once `close` was emitted (sent, or the client gone). */
  closed = false;

  setHeader(name: string, value: unknown): this {
    this.headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    return this;
  }
  header(name: string, value: unknown): this {
    return this.setHeader(name, value);
  }
  set(name: string, value: unknown): this {
    return this.setHeader(name, value);
  }
  append(name: string, value: unknown): this {
    const previous = this.headers[name.toLowerCase()];
    return this.setHeader(name, previous === undefined ? value : `${previous}, ${String(value)}`);
  }
  getHeader(name: string): string | undefined {
    return this.headers[name.toLowerCase()];
  }
  get(name: string): string | undefined {
    return this.getHeader(name);
  }
  status(code: number): this {
    this.statusCode = code;
    return this;
  }
  /** The response was sent (what the platform does after the handler). */
  finish(): void {
    this.writableEnded = true;
    this.headersSent = true;
    this.emit('finish');
    this.closed = true;
    this.emit('close');
  }
  /** The client went away before the response was sent. */
  abort(): void {
    this.closed = true;
    this.emit('close');
  }
}

/** A hand-made HTTP `ExecutionContext` for one handler of `controller`. */
export function httpContext(
  controller: Type,
  handlerName: string,
  request: object,
  response: object,
): ExecutionContext {
  const handler = (controller.prototype as Record<string, unknown>)[handlerName];
  if (typeof handler !== 'function')
    throw new Error(`${controller.name} has no handler "${handlerName}"`);
  const next = () => undefined;
  const args = [request, response, next];
  const wrongType = (type: string) => () => {
    throw new Error(`the harness' contexts are HTTP ones, not ${type}`);
  };
  return {
    getClass: () => controller,
    getHandler: () => handler as (...params: unknown[]) => unknown,
    getType: () => 'http',
    getArgs: () => args,
    getArgByIndex: (index: number) => args[index],
    switchToHttp: () => ({
      getRequest: () => request,
      getResponse: () => response,
      getNext: () => next,
    }),
    switchToRpc: wrongType('rpc'),
    switchToWs: wrongType('ws'),
  } as unknown as ExecutionContext;
}

/** What one guard evaluation came to. */
export interface GuardOutcome {
  /** `canActivate` answered `true`. */
  readonly allowed: boolean;
  /** 200 when allowed, else the status of what it threw (429 for a denial, 503 for `failMode: 'closed'`). */
  readonly status: number;
  /** What `canActivate` threw or rejected with. */
  readonly error: unknown;
  /** The response's headers after the guard (lower-case names). */
  readonly headers: Record<string, string>;
  readonly request: FakeRequest;
  readonly response: FakeResponse;
}

/** What a handler run through the interceptor came to. */
export interface HandlerOutcome {
  /** The handler's last value (`undefined` when it threw). */
  readonly value: unknown;
  /** What the handler threw or its observable errored with. */
  readonly error: unknown;
  readonly headers: Record<string, string>;
  readonly request: FakeRequest;
  readonly response: FakeResponse;
}

/** A guard outcome, then the handler's when the guard admitted the call (Nest's order: guards, interceptors, handler). */
export interface CallOutcome extends GuardOutcome {
  /** The handler's outcome; `undefined` when the guard refused the call. */
  readonly handler: HandlerOutcome | undefined;
}

export type Handler = () => unknown;

export interface GuardHarness {
  readonly clock: ManualClock;
  readonly store: MemoryStore;
  readonly moduleRef: TestingModule;
  readonly guard: RateLimitGuard;
  readonly interceptor: RateLimitInterceptor;
  /** A fresh response per call unless given; pass `request` to reuse one. */
  canActivate(
    handlerName: string,
    request?: FakeRequest | FakeRequestInit,
    response?: FakeResponse,
  ): Promise<GuardOutcome>;
  /**
   * The interceptor around `handler` (its value, promise or observable), with
   * a fresh context on `request`, as Nest builds one per stage: pass the
   * request the guard saw to make them one call.
   */
  intercept(
    handlerName: string,
    handler: Handler,
    request?: FakeRequest | FakeRequestInit,
    response?: FakeResponse,
  ): Promise<HandlerOutcome>;
  /** One whole call: the guard, then (when it admits) the interceptor and `handler`, then the response is sent. */
  call(
    handlerName: string,
    handler?: Handler,
    request?: FakeRequest | FakeRequestInit,
  ): Promise<CallOutcome>;
  /** Closes the module (the guard's and module's shutdown hooks run). */
  close(): Promise<void>;
}

export interface GuardHarnessOptions extends RateLimitModuleOptions {
  /** Other controllers and providers the module holds. */
  readonly controllers?: Type[];
  readonly providers?: Type[];
}

const asRequest = (request: FakeRequest | FakeRequestInit | undefined): FakeRequest =>
  request !== undefined && 'socket' in request
    ? (request as FakeRequest)
    : fakeRequest(request as FakeRequestInit | undefined);

const statusOf = (error: unknown): number =>
  error instanceof HttpException ? error.getStatus() : 500;

/**
 * Builds and initialises the module: `RateLimitModule.forRoot({ store: new
 * MemoryStore(), clock: new ManualClock(HARNESS_START), ...options })` with
 * `controller` (and `options.controllers`).
 */
export async function createGuardHarness(
  controller: Type,
  options: GuardHarnessOptions = {},
): Promise<GuardHarness> {
  const { controllers = [], providers = [], ...moduleOptions } = options;
  const clock =
    moduleOptions.clock instanceof ManualClock
      ? moduleOptions.clock
      : new ManualClock(HARNESS_START);
  const store =
    moduleOptions.store instanceof MemoryStore ? moduleOptions.store : new MemoryStore();
  const moduleRef = await Test.createTestingModule({
    imports: [RateLimitModule.forRoot({ store, clock, ...moduleOptions })],
    controllers: [controller, ...controllers],
    providers,
  }).compile();
  moduleRef.get(HttpAdapterHost).httpAdapter = new ExpressAdapter();
  await moduleRef.init();
  const guard = moduleRef.get(RateLimitGuard);
  const interceptor = moduleRef.get(RateLimitInterceptor);

  const canActivate = async (
    handlerName: string,
    requestInit?: FakeRequest | FakeRequestInit,
    response = new FakeResponse(),
  ): Promise<GuardOutcome> => {
    const request = asRequest(requestInit);
    const context = httpContext(controller, handlerName, request, response);
    try {
      const allowed = await guard.canActivate(context);
      return {
        allowed,
        status: allowed ? 200 : 403,
        error: undefined,
        headers: { ...response.headers },
        request,
        response,
      };
    } catch (error) {
      return {
        allowed: false,
        status: statusOf(error),
        error,
        headers: { ...response.headers },
        request,
        response,
      };
    }
  };

  const intercept = async (
    handlerName: string,
    handler: Handler,
    requestInit?: FakeRequest | FakeRequestInit,
    response = new FakeResponse(),
  ): Promise<HandlerOutcome> => {
    const request = asRequest(requestInit);
    const context = httpContext(controller, handlerName, request, response);
    const next: CallHandler = {
      handle: () =>
        defer(() => {
          const value = handler();
          if (isObservable(value)) return value as Observable<unknown>;
          return value instanceof Promise ? from(value) : of(value);
        }),
    };
    try {
      const value = await lastValueFrom(interceptor.intercept(context, next), {
        defaultValue: undefined,
      });
      return { value, error: undefined, headers: { ...response.headers }, request, response };
    } catch (error) {
      return { value: undefined, error, headers: { ...response.headers }, request, response };
    }
  };

  const call = async (
    handlerName: string,
    handler: Handler = () => ({ ok: true }),
    requestInit?: FakeRequest | FakeRequestInit,
  ): Promise<CallOutcome> => {
    const request = asRequest(requestInit);
    const response = new FakeResponse();
    const guarded = await canActivate(handlerName, request, response);
    if (!guarded.allowed) {
      response.status(guarded.status).finish();
      return { ...guarded, handler: undefined };
    }
    const handled = await intercept(handlerName, handler, request, response);
    response.status(handled.error === undefined ? 200 : statusOf(handled.error)).finish();
    return { ...guarded, headers: { ...response.headers }, handler: handled };
  };

  return {
    clock,
    store,
    moduleRef,
    guard,
    interceptor,
    canActivate,
    intercept,
    call,
    close: () => moduleRef.close(),
  };
}

/** Lets the promise jobs queued so far run (e.g. a wait released by the clock resolving its request). */
export async function flushPromises(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
}
