import {
  Injectable,
  SetMetadata,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';

const AUTHENTICATED = 'sample:authenticated';

/** Marks a controller or route as requiring a user. */
export const Authenticated = () => SetMetadata(AUTHENTICATED, true);

/**
 * A stand-in for real authentication: `Authorization: Bearer <user-id>`
 * sets `req.user = { id }`. Registered globally *before* `RateLimitGuard`
 * (see app.module.ts), so `key: 'user'` finds the user.
 */
@Injectable()
export class HeaderAuthGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context
      .switchToHttp()
      .getRequest<{ headers: Record<string, string | undefined>; user?: { id: string } }>();
    const match = /^Bearer ([\w-]{1,64})$/.exec(request.headers.authorization ?? '');
    if (match) request.user = { id: match[1]! };
    const required = this.reflector.getAllAndOverride<boolean>(AUTHENTICATED, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (required && !request.user)
      throw new UnauthorizedException('Send "Authorization: Bearer <user-id>"');
    return true;
  }
}
