import type { Type } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';

/**
 * Hands out route ids: a route's part of its bucket keys. Stable across
 * processes that run the same code (Redis buckets are shared between them):
 * class, method and route paths, plus a counter for two classes that share
 * all of those.
 *
 * @internal
 */
export class RouteIds {
  private readonly taken = new Set<string>();

  next(controller: Type, handler: (...args: unknown[]) => unknown): string {
    const path = [
      Reflect.getMetadata(PATH_METADATA, controller),
      Reflect.getMetadata(PATH_METADATA, handler),
    ]
      .flat()
      .filter((segment) => segment !== undefined)
      .map((segment) => String(segment).replace(/^\/+|\/+$/g, ''))
      .filter((segment) => segment !== '')
      .join('/');
    const base = `${controller.name}.${handler.name}${path === '' ? '' : `:${path}`}`.replaceAll(
      '|',
      '/',
    );
    let routeId = base;
    for (let n = 2; this.taken.has(routeId); n++) routeId = `${base}#${n}`;
    this.taken.add(routeId);
    return routeId;
  }
}
