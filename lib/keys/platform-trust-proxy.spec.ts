import { readPlatformTrustProxy, trustProxyConflict } from './platform-trust-proxy.js';

const express = (value: unknown) => ({
  getType: () => 'express',
  getInstance: () => ({ get: (name: string) => (name === 'trust proxy' ? value : undefined) }),
});
const fastify = (trustProxy: unknown) => ({
  getType: () => 'fastify',
  getInstance: () => ({ [Symbol('fastify.options')]: { trustProxy } }),
});

describe('readPlatformTrustProxy', () => {
  it("reads Express's setting and Fastify's option, naming each", () => {
    expect(readPlatformTrustProxy(express('loopback'))).toEqual({
      setting: "Express app.set('trust proxy')",
      value: 'loopback',
    });
    expect(readPlatformTrustProxy(fastify(true))).toEqual({
      setting: 'Fastify { trustProxy }',
      value: true,
    });
  });

  it('knows nothing of other platforms, or without an adapter', () => {
    expect(readPlatformTrustProxy(undefined)).toBeUndefined();
    expect(
      readPlatformTrustProxy({ getType: () => 'h3', getInstance: () => ({}) }),
    ).toBeUndefined();
    expect(
      readPlatformTrustProxy({ getType: () => 'fastify', getInstance: () => ({}) }),
    ).toBeUndefined();
  });
});

describe('trustProxyConflict', () => {
  const platform = (value: unknown) => ({ setting: "Express app.set('trust proxy')", value });

  it.each<[unknown, unknown]>([
    [true, true],
    [2, 2],
    [['10.0.0.1'], '10.0.0.1'],
    [['10.0.0.0/8', '::1'], ' ::1/128 , 10.0.0.0/8'],
    [['127.0.0.1/8', '::1'], 'loopback'], // a named range, spelt out
    [['127.0.0.0/8', '::1/128'], 'loopback'], // its network address
    [['10.1.2.3/16'], '10.1.0.0/16'],
    [['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'], ['uniquelocal']],
  ])('module %j and platform %j agree: nothing to say', (ours, theirs) => {
    expect(trustProxyConflict(ours as never, platform(theirs))).toBeUndefined();
  });

  it.each<[unknown, unknown]>([
    [false, 'loopback'],
    [0, true],
    [1, true],
    [true, 1],
    [1, 2],
    [['10.0.0.0/8'], 'loopback'],
    [['10.0.0.0/8'], ['10.0.0.0/16']],
    [true, ['10.0.0.1']],
  ])('module %j and platform %j disagree: said, naming both', (ours, theirs) => {
    const message = trustProxyConflict(ours as never, platform(theirs));
    expect(message).toMatch(
      /^RateLimitModule: trustProxy is .* but the platform's own setting, Express app\.set\('trust proxy'\), is /,
    );
    expect(message).toContain(
      `trustProxy is ${Array.isArray(ours) ? `["${ours.join('", "')}"]` : String(ours)}`,
    );
  });

  it.each<[unknown, unknown]>([
    [undefined, 'loopback'], // the module's not set: the platform's applies
    [1, false], // the platform's left at its default: the module's configures the limiter
    [1, undefined],
    [false, 0],
    [true, () => true], // a function: nothing to compare
    [1, 'not-an-address'],
  ])('module %j, platform %j: nothing to say', (ours, theirs) => {
    expect(trustProxyConflict(ours as never, platform(theirs))).toBeUndefined();
  });
});
