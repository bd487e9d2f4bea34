import {
  Controller,
  Get,
  Injectable,
  UnauthorizedException,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { RateLimit, RateLimitGuard } from 'nestjs-holdup';

/**
 * What Passport's `AuthGuard('jwt')` does, without Passport: `Authorization:
 * Bearer <id>` authenticates as `{ id }`, anything else is a 401. Bound on
 * controllers and routes, the way Nest's documentation binds it.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context
      .switchToHttp()
      .getRequest<{ headers: Record<string, string | undefined>; user?: object }>();
    const bearer = /^Bearer (.+)$/.exec(request.headers['authorization'] ?? '');
    if (!bearer) throw new UnauthorizedException();
    request.user = { id: bearer[1] };
    return true;
  }
}

const PER_USER = { name: 'per-user', rate: '1/min', burst: 2, key: 'user' } as const;

/** The auth guard on the class. */
@UseGuards(BearerAuthGuard)
@Controller('profile')
export class ProfileController {
  @RateLimit(PER_USER)
  @Get()
  me() {
    return { ok: true };
  }
}

/** The auth guard on the route; the limits on the class. */
@RateLimit(PER_USER)
@Controller('orders')
export class OrdersController {
  @UseGuards(BearerAuthGuard)
  @Get()
  list() {
    return { ok: true };
  }
}

/** An address limit (before authentication) and a user limit (after it) on one route. */
@UseGuards(BearerAuthGuard)
@RateLimit([{ name: 'per-ip', rate: '1/min', burst: 4, key: 'ip' }, PER_USER])
@Controller('mixed')
export class MixedController {
  @Get()
  index() {
    return { ok: true };
  }
}

/** RateLimitGuard bound on the route too, before the auth guard: still one evaluation, user limits after auth. */
@UseGuards(RateLimitGuard, BearerAuthGuard)
@RateLimit(PER_USER)
@Controller('bound-too')
export class BoundTooController {
  @Get()
  index() {
    return { ok: true };
  }
}

/** Keyed by user, but nothing authenticates: every request falls back to its address. */
@RateLimit({ ...PER_USER, burst: 5 })
@Controller('unauthenticated')
export class UnauthenticatedController {
  @Get()
  index() {
    return { ok: true };
  }
}

/** No @RateLimit(): the module defaults apply (keyed by user in the test that uses it). */
@UseGuards(BearerAuthGuard)
@Controller('settings')
export class SettingsController {
  @Get()
  index() {
    return { ok: true };
  }
}
