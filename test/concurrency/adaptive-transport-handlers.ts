import { BadRequestException, Controller } from '@nestjs/common';
import { MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import { MessageBody, SubscribeMessage, WebSocketGateway, WsException } from '@nestjs/websockets';
import { ManualClock, RateLimit } from 'nestjs-holdup';
import { InFlight } from './generations.controller.js';

/** The module clock of the adaptive transport specs: handlers move it to take time. */
export const adaptiveClock = new ManualClock(1_700_000_000_000);

/** Handlers in mode 'hold' wait on this gate. */
export const adaptiveHeld = new InFlight();

/**
 * 'ok' answers, 'hold' waits for the test, 'fail' throws the transport's own
 * error (no status: a failure for the controller), 'reject' throws a 400
 * (a client error: not one); 'ok', 'fail' and 'reject' take 2 ms of the clock.
 */
async function work(mode: string, fail: () => Error): Promise<string> {
  adaptiveHeld.enter();
  try {
    if (mode === 'hold') await adaptiveHeld.gate;
    else adaptiveClock.advance(2);
    if (mode === 'fail') throw fail();
    if (mode === 'reject') throw new BadRequestException('bad input');
    return `done ${mode}`;
  } finally {
    adaptiveHeld.leave();
  }
}

/** One slot to start with, and room for one caller to wait a second. */
const QUEUED = {
  name: 'queued',
  key: 'global',
  concurrency: { adaptive: { min: 1, max: 4, initial: 1 }, backlog: { size: 1, timeout: '1s' } },
} as const;

/** Four slots to start with; its windows need 8 calls and 10 ms. */
const JUDGED = {
  name: 'judged',
  key: 'global',
  concurrency: { adaptive: { min: 1, max: 8, initial: 4 } },
} as const;

/** socket.io events or `ws` messages: answers `{ event: 'worked', data }`. */
@WebSocketGateway()
export class AdaptiveGateway {
  @RateLimit(QUEUED)
  @SubscribeMessage('queued')
  async queued(@MessageBody() mode: string) {
    return { event: 'worked', data: await work(mode, () => new WsException('work failed')) };
  }

  @RateLimit(JUDGED)
  @SubscribeMessage('judged')
  async judged(@MessageBody() mode: string) {
    return { event: 'worked', data: await work(mode, () => new WsException('work failed')) };
  }
}

@Controller()
export class AdaptiveMessages {
  @RateLimit(QUEUED)
  @MessagePattern('queued')
  queued(@Payload() mode: string): Promise<string> {
    return work(mode, () => new RpcException('work failed'));
  }

  @RateLimit(JUDGED)
  @MessagePattern('judged')
  judged(@Payload() mode: string): Promise<string> {
    return work(mode, () => new RpcException('work failed'));
  }
}
