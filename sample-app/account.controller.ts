import { Controller, Get, Post, Req } from '@nestjs/common';
import { RateLimit } from 'nestjs-holdup';
import { Authenticated } from './auth.guard.js';

/** One budget per user, shared by every route of the controller. */
const ACCOUNT_LIMIT = {
  name: 'account',
  rate: '10/min',
  burst: 5,
  key: 'user',
  scope: 'shared',
} as const;

@Authenticated()
@RateLimit(ACCOUNT_LIMIT)
@Controller('account')
export class AccountController {
  @Get()
  me(@Req() request: { user: { id: string } }) {
    return { user: request.user.id };
  }

  /** An expensive export: takes 5 tokens of the user's account budget. */
  @RateLimit({ ...ACCOUNT_LIMIT, cost: 5 })
  @Post('export')
  export() {
    return { status: 'queued' };
  }
}
