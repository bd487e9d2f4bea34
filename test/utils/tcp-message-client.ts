import { connect, type Socket } from 'node:net';

/**
 * A Nest TCP microservice client over a raw socket, for what `ClientTCP`
 * cannot do: connect from a chosen local address (every 127.0.0.0/8 address
 * is this machine), so that two peers have two addresses. Speaks Nest's
 * framing: `<length>#<JSON>`, requests `{ pattern, data, id }`, replies
 * `{ id, response | err, isDisposed }`.
 */
export class TcpMessageClient {
  private buffer = '';
  private nextId = 0;
  private readonly pending = new Map<
    string,
    { resolve: (value: unknown) => void; reject: (error: unknown) => void }
  >();

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.receive(chunk));
  }

  static async connect(port: number, localAddress: string): Promise<TcpMessageClient> {
    const socket = connect({ host: '127.0.0.1', port, localAddress });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new TcpMessageClient(socket);
  }

  /** `client.send(pattern, data)`: resolves with the response, rejects with the error object. */
  send(pattern: string, data: unknown): Promise<unknown> {
    const id = String(++this.nextId);
    const json = JSON.stringify({ pattern, data, id });
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.write(`${json.length}#${json}`);
    });
  }

  /** `client.emit(pattern, data)`: an event, no id and no answer. */
  emit(pattern: string, data: unknown): void {
    const json = JSON.stringify({ pattern, data });
    this.socket.write(`${json.length}#${json}`);
  }

  close(): void {
    this.socket.destroy();
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    for (;;) {
      const hash = this.buffer.indexOf('#');
      if (hash < 0) return;
      const length = Number(this.buffer.slice(0, hash));
      if (this.buffer.length < hash + 1 + length) return;
      const message = JSON.parse(this.buffer.slice(hash + 1, hash + 1 + length)) as {
        id: string;
        response?: unknown;
        err?: unknown;
      };
      this.buffer = this.buffer.slice(hash + 1 + length);
      const waiting = this.pending.get(message.id);
      if (!waiting) continue;
      this.pending.delete(message.id);
      if (message.err !== undefined && message.err !== null) waiting.reject(message.err);
      else waiting.resolve(message.response);
    }
  }
}
