import { MemoryStore } from '../../../adapters/memory/memory.store.js';
import { attributeKey, INSTRUMENTS, prometheusName } from './instruments.js';
import { storeKind } from './store-kind.js';

describe('metric names', () => {
  it('Prometheus names: dots to underscores, _total on counters, _seconds on durations, the prefix first', () => {
    expect(prometheusName(INSTRUMENTS.requests)).toBe('rate_limiting_requests_total');
    expect(prometheusName(INSTRUMENTS.storeDuration)).toBe('rate_limiting_store_duration_seconds');
    expect(prometheusName(INSTRUMENTS.adaptiveRate)).toBe('rate_limiting_adaptive_rate');
    expect(prometheusName(INSTRUMENTS.twoTierLeases, 'app_')).toBe(
      'app_rate_limiting_two_tier_leases_total',
    );
  });

  it('OpenTelemetry attribute keys are namespaced; no instrument has a key, caller or path attribute', () => {
    expect(attributeKey('policy')).toBe('rate_limiting.policy');
    const attributes = Object.values(INSTRUMENTS).flatMap((instrument) => instrument.attributes);
    expect(new Set(attributes)).toEqual(
      new Set(['policy', 'result', 'transport', 'store', 'outcome', 'fail_mode']),
    );
  });

  it('store kinds are what the store declares (its kind), a store that declares none is custom', () => {
    expect(storeKind(new MemoryStore())).toBe('memory');
    expect(storeKind({ kind: 'redis', consume() {} } as never)).toBe('redis');
    class RedisStore {}
    expect(storeKind(new RedisStore() as never)).toBe('custom'); // not by class name
    expect(storeKind({ consume() {} } as never)).toBe('custom');
  });
});
