import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { MessageBody, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { RateLimit, type RateLimitOptions } from 'nestjs-holdup';

/**
 * The budget of `settle.controller.ts` on a gateway and a message handler: 1,000
 * tokens refilling at 100 a second, one bucket for everyone; every call reserves
 * 100 and settles at what it reports it spent.
 */
const TOKENS: RateLimitOptions = {
  name: 'tokens',
  rate: 100,
  burst: 1000,
  key: 'global',
  cost: 100,
  settle: ({ result }) => (result as { data: number }).data,
};

/** socket.io events or `ws` messages `{ event, data }`: answers `{ event: 'spent', data }`. */
@WebSocketGateway()
export class SpendGateway {
  @RateLimit(TOKENS)
  @SubscribeMessage('spend')
  spend(@MessageBody() spend: number) {
    return { event: 'spent', data: spend };
  }
}

/** A TCP message handler answering `{ data }`. */
@Controller()
export class SpendMessages {
  @RateLimit(TOKENS)
  @MessagePattern('spend')
  spend(@Payload() spend: number) {
    return { data: spend };
  }
}
