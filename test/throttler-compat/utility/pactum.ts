/**
 * The few `pactum` calls @nestjs/throttler's specs make (`request.setBaseUrl`,
 * `spec().get()` and its `expect…` steps), on Node's `fetch`. Written for this
 * repository (pactum is not one of its dependencies); not part of the copied suite.
 */
import { expect } from '@jest/globals';

let baseUrl = '';

export const request = {
  setBaseUrl(url: string): void {
    baseUrl = url;
  },
};

interface Context {
  res: { statusCode: number; headers: Record<string, string>; body: string };
}

type Step = (ctx: Context) => void;

class Spec implements PromiseLike<Context> {
  private path = '/';
  private readonly steps: Step[] = [];

  get(path: string): this {
    this.path = path;
    return this;
  }

  expectStatus(status: number): this {
    this.steps.push((ctx) => expect(ctx.res.statusCode).toBe(status));
    return this;
  }

  expectHeader(name: string, value: string): this {
    this.steps.push((ctx) => expect(ctx.res.headers[name.toLowerCase()]).toBe(value));
    return this;
  }

  expectHeaderContains(name: string, value: string | RegExp): this {
    this.steps.push((ctx) => {
      const actual = ctx.res.headers[name.toLowerCase()];
      expect(actual).toBeDefined();
      if (typeof value === 'string') expect(actual).toContain(value);
      else expect(actual).toMatch(value);
    });
    return this;
  }

  expectBodyContains(text: string): this {
    this.steps.push((ctx) => expect(ctx.res.body).toContain(text));
    return this;
  }

  expect(step: Step): this {
    this.steps.push(step);
    return this;
  }

  private async run(): Promise<Context> {
    const response = await fetch(baseUrl + this.path);
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => (headers[name] = value));
    const ctx: Context = {
      res: { statusCode: response.status, headers, body: await response.text() },
    };
    for (const step of this.steps) step(ctx);
    return ctx;
  }

  then<A = Context, B = never>(
    onFulfilled?: ((value: Context) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    return this.run().then(onFulfilled, onRejected);
  }
}

export const spec = (): Spec => new Spec();
