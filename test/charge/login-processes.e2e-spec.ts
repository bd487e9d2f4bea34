/**
 * Charge by outcome across processes: 4 Node processes, each a Nest
 * application on one shared Redis, receive 20 concurrent wrong passwords for
 * one account under "5 failures per 15 min". Every request is held in the
 * handler until all 20 are past the guard, so no outcome can help: at most 5
 * may reach a handler, across all processes together.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { sharedRedisUrl, uniquePrefix } from '../utils/redis-harness.js';
import { nextMessage } from '../utils/next-message.js';

const WORKER = fileURLToPath(new URL('./login.worker.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/esm/lib/index.js', import.meta.url));
const PROCESSES = 4;
const ATTEMPTS_EACH = 5;

describe("charge: 'failures' across processes (RedisStore)", () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it(`${PROCESSES * ATTEMPTS_EACH} concurrent wrong passwords from ${PROCESSES} processes: exactly 5 reach a handler`, async () => {
    if (!existsSync(BUILT))
      throw new Error('dist/ is missing: run `npm run build` first (`npm test` does).');
    const env = {
      ...process.env,
      NODE_OPTIONS: '',
      REDIS_URL: sharedRedisUrl(),
      KEY_PREFIX: uniquePrefix('login-processes'),
    };
    for (let i = 0; i < PROCESSES; i++) children.push(fork(WORKER, [], { env, stdio: 'inherit' }));
    const ports = (
      await Promise.all(children.map((child) => nextMessage<{ port: number }>(child, 'ready')))
    ).map(({ port }) => port);

    let entered = 0;
    for (const child of children)
      child.on(
        'message',
        (message: { type: string }) => void (message.type === 'entered' && entered++),
      );
    let answered = 0;
    const statuses = ports.flatMap((port) =>
      Array.from({ length: ATTEMPTS_EACH }, () =>
        request(`http://127.0.0.1:${port}`)
          .post('/auth/login')
          .then((res) => {
            answered++;
            return res.status;
          }),
      ),
    );
    // Every attempt is either held in a handler or already refused: only then may outcomes exist.
    while (entered + answered < PROCESSES * ATTEMPTS_EACH)
      await new Promise((resolve) => setTimeout(resolve, 5));
    for (const child of children) child.send({ type: 'open' });
    const all = await Promise.all(statuses);
    expect(entered).toBe(5);
    expect(all.filter((status) => status === 401)).toHaveLength(5);
    expect(all.filter((status) => status === 429)).toHaveLength(15);
    for (const child of children) child.disconnect();
  });
});
