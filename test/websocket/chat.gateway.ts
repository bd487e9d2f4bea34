import { MessageBody, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { RateLimit, RateLimiter } from 'nestjs-holdup';

/** One gateway for both platforms (socket.io events, or `ws` messages `{ event, data }`). */
@WebSocketGateway()
export class ChatGateway {
  constructor(private readonly limiter: RateLimiter) {}

  /** Per client address (the default key): burst 2, then one every 30 s. */
  @RateLimit({ name: 'say', rate: '2/min', burst: 2 })
  @SubscribeMessage('say')
  say(@MessageBody() text: string) {
    return { event: 'said', data: text };
  }

  /** Per connection. */
  @RateLimit({ name: 'typing', rate: '1/min', burst: 1, key: 'connection' })
  @SubscribeMessage('typing')
  typing() {
    return { event: 'typed', data: true };
  }

  /** Answers through the acknowledgement (socket.io): returns a plain value. */
  @RateLimit({ name: 'ask', rate: '1/min', burst: 1 })
  @SubscribeMessage('ask')
  ask(@MessageBody() question: string) {
    return `answer to ${question}`;
  }

  /** Lets a test know every earlier message of its socket was handled (answered through the acknowledgement). */
  @SubscribeMessage('ping-sync')
  pingSync() {
    return 'pong';
  }

  /** Not limited by a decorator: the service decides, with enforce(). */
  @SubscribeMessage('export')
  async export() {
    await this.limiter.enforce('exports', { name: 'exports', rate: '1/hour', burst: 1 });
    return { event: 'exported', data: true };
  }
}

/** A limit no one can mean: the application must not start. */
@WebSocketGateway()
export class BadGateway {
  @RateLimit({ rate: 'ten per minute' })
  @SubscribeMessage('bad')
  bad() {
    return 'never';
  }
}
