// The floor of issue 14, shared by the guard micro-benchmark and the HTTP
// benchmark: a hand-written lazy-refill bucket per client address in a Map,
// writing one header (a denial: Retry-After and a 429), as a team would write it without a library (no cap,
// no sweep: it never forgets a client).
import { HttpException, Injectable } from '@nestjs/common';

/** A global-guard class for a bucket of `rate` tokens per second and `burst` tokens. */
export function floorGuard(rate, burst) {
  class FloorGuard {
    buckets = new Map();
    canActivate(context) {
      const http = context.switchToHttp();
      const now = Date.now();
      const key = http.getRequest().ip;
      let bucket = this.buckets.get(key);
      if (bucket === undefined) this.buckets.set(key, (bucket = { tokens: burst, at: now }));
      else {
        bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) * rate) / 1000);
        bucket.at = now;
      }
      if (bucket.tokens < 1) {
        // A denial as a team would write it: Retry-After, and a 429 that
        // Nest's own exception filter answers ({ statusCode, message }).
        http.getResponse().header('Retry-After', String(Math.ceil((1 - bucket.tokens) / rate)));
        throw new HttpException('Too Many Requests', 429);
      }
      bucket.tokens -= 1;
      // Express's response and Fastify's reply both have header(name, value).
      http.getResponse().header('RateLimit', `"default";r=${Math.floor(bucket.tokens)};t=1`);
      return true;
    }
  }
  Reflect.decorate([Injectable()], FloorGuard);
  return FloorGuard;
}
