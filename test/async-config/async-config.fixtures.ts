import { Controller, Get, Injectable, Module, UseGuards } from '@nestjs/common';
import {
  RateLimit,
  RateLimitGuard,
  type RateLimitModuleOptions,
  type RateLimitOptionsFactory,
} from 'nestjs-holdup';

/** A stand-in for @nestjs/config's ConfigService: values from a plain object. */
@Injectable()
export class ConfigService {
  static values: Record<string, unknown> = {};

  get<T>(key: string): T {
    if (!(key in ConfigService.values)) throw new Error(`ConfigService: no value for ${key}`);
    return ConfigService.values[key] as T;
  }
}

@Module({ providers: [ConfigService], exports: [ConfigService] })
export class ConfigModule {}

/** For `useClass`: Nest calls `createRateLimitOptions()`. */
@Injectable()
export class RateLimitConfig implements RateLimitOptionsFactory {
  constructor(private readonly config: ConfigService) {}

  createRateLimitOptions(): RateLimitModuleOptions {
    return {
      clock: this.config.get('CLOCK'),
      defaults: { rate: this.config.get<string>('RATE'), burst: this.config.get<number>('BURST') },
      headers: this.config.get('HEADERS'),
    };
  }
}

/** No @RateLimit: limited only by the configured defaults. */
@Controller('configured')
export class ConfiguredController {
  @Get()
  index() {
    return { ok: true };
  }

  @RateLimit({ name: 'route', rate: '1/min', burst: 1 })
  @Get('decorated')
  decorated() {
    return { ok: true };
  }
}

/** Bound by hand, for `bindGlobally: false`. */
@UseGuards(RateLimitGuard)
@Controller('guarded')
export class GuardedController {
  @Get()
  index() {
    return { ok: true };
  }
}

@Controller('guarded-route')
export class GuardedRouteController {
  @UseGuards(RateLimitGuard)
  @RateLimit({ name: 'route', rate: '1/min', burst: 1 })
  @Get('on')
  on() {
    return { ok: true };
  }

  @RateLimit({ name: 'route', rate: '1/min', burst: 1 })
  @Get('off')
  off() {
    return { ok: true };
  }
}
