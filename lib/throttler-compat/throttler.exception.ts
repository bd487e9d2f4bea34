import { HttpException, HttpStatus } from '@nestjs/common';

/** The 429 message `@nestjs/throttler` answers with; suites match it. */
export const throttlerMessage = 'ThrottlerException: Too Many Requests';

/** A 429, as `@nestjs/throttler` throws it (`{ statusCode: 429, message }`). */
export class ThrottlerException extends HttpException {
  constructor(message?: string) {
    super(`${message || throttlerMessage}`, HttpStatus.TOO_MANY_REQUESTS);
  }
}
