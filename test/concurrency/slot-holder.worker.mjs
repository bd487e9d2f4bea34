// A process that takes concurrency slots on Redis and is then killed (SIGKILL)
// by the test without ever releasing them. Plain JavaScript on ioredis: it runs
// the store's own acquire script, handed over by the test (SCRIPT), on the
// store's own Redis key (KEY, and beside it the released ids'), as RedisSlots does.
import { Redis } from 'ioredis';

const client = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: 1 });
const slots = Number(process.env.SLOTS);
for (let i = 0; i < slots; i++) {
  const [allowed] = await client.eval(
    process.env.SCRIPT,
    2,
    process.env.KEY,
    `${process.env.KEY}:released`,
    process.env.LIMIT,
    process.env.LEASE_MS,
    `worker-${process.pid}-${i}`,
  );
  if (Number(allowed) !== 1) throw new Error('slot refused');
}
process.send({ type: 'holding' });
// Holds them until killed.
setInterval(() => undefined, 60_000);
