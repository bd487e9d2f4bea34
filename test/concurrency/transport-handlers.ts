import { Args, Query, Resolver } from '@nestjs/graphql';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import { MessageBody, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { RateLimit } from 'nestjs-holdup';
import { InFlight } from './generations.controller.js';

/** Handlers on every transport wait on this gate in mode 'hold'. */
export const held = new InFlight();

/** One slot for everyone: `mode` 'ok' answers, 'fail' throws, 'hold' waits for the test. */
async function work(mode: string, fail: () => Error): Promise<string> {
  held.enter();
  try {
    if (mode === 'hold') await held.gate;
    if (mode === 'fail') throw fail();
    return `done ${mode}`;
  } finally {
    held.leave();
  }
}

const ONE_SLOT = { name: 'work', concurrency: 1, key: 'global' } as const;

export const WORK_TYPE_DEFS = /* GraphQL */ `
  type Query {
    work(mode: String!): String
  }
`;

@Resolver()
export class WorkResolver {
  @RateLimit(ONE_SLOT)
  @Query('work')
  work(@Args('mode') mode: string): Promise<string> {
    return work(mode, () => new Error('work failed'));
  }
}

@WebSocketGateway()
export class WorkGateway {
  @RateLimit(ONE_SLOT)
  @SubscribeMessage('work')
  async work(@MessageBody() mode: string) {
    return { event: 'worked', data: await work(mode, () => new Error('work failed')) };
  }
}

@Controller()
export class WorkMessages {
  @RateLimit(ONE_SLOT)
  @MessagePattern('work')
  work(@Payload() mode: string): Promise<string> {
    return work(mode, () => new RpcException('work failed'));
  }
}
