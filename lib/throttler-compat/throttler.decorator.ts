import { Inject } from '@nestjs/common';
import {
  THROTTLER_BLOCK_DURATION,
  THROTTLER_KEY_GENERATOR,
  THROTTLER_LIMIT,
  THROTTLER_SKIP,
  THROTTLER_TRACKER,
  THROTTLER_TTL,
} from './throttler.constants.js';
import type {
  Resolvable,
  ThrottlerGenerateKeyFunction,
  ThrottlerGetTrackerFunction,
} from './throttler-module-options.interface.js';
import { getOptionsToken, getStorageToken } from './throttler.providers.js';

/** What `@Throttle()` takes per throttler name. */
export interface ThrottlerMethodOrControllerOptions {
  limit?: Resolvable<number>;
  ttl?: Resolvable<number>;
  blockDuration?: Resolvable<number>;
  getTracker?: ThrottlerGetTrackerFunction;
  generateKey?: ThrottlerGenerateKeyFunction;
}

function setThrottlerMetadata(
  target: object,
  options: Record<string, ThrottlerMethodOrControllerOptions>,
): void {
  for (const name in options) {
    const option = options[name]!;
    Reflect.defineMetadata(THROTTLER_TTL + name, option.ttl, target);
    Reflect.defineMetadata(THROTTLER_LIMIT + name, option.limit, target);
    Reflect.defineMetadata(THROTTLER_BLOCK_DURATION + name, option.blockDuration, target);
    Reflect.defineMetadata(THROTTLER_TRACKER + name, option.getTracker, target);
    Reflect.defineMetadata(THROTTLER_KEY_GENERATOR + name, option.generateKey, target);
  }
}

/** Overrides named throttlers' `limit`, `ttl`, `blockDuration`, tracker or key on a class or method. */
export const Throttle = (
  options: Record<string, ThrottlerMethodOrControllerOptions>,
): MethodDecorator & ClassDecorator => {
  return ((target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor) {
      setThrottlerMetadata(descriptor.value as object, options);
      return descriptor;
    }
    setThrottlerMetadata(target, options);
    return target;
  }) as MethodDecorator & ClassDecorator;
};

/** Skips throttlers by name (`{ default: true }` by default; `false` re-enables one on a method). */
export const SkipThrottle = (
  skip: Record<string, boolean> = { default: true },
): MethodDecorator & ClassDecorator => {
  return ((target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const reflectionTarget = (descriptor?.value as object | undefined) ?? target;
    for (const key in skip)
      Reflect.defineMetadata(THROTTLER_SKIP + key, skip[key], reflectionTarget);
    return descriptor ?? target;
  }) as MethodDecorator & ClassDecorator;
};

export const InjectThrottlerOptions = (): PropertyDecorator & ParameterDecorator =>
  Inject(getOptionsToken());
export const InjectThrottlerStorage = (): PropertyDecorator & ParameterDecorator =>
  Inject(getStorageToken());
