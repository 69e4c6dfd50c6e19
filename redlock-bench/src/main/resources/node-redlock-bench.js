// node-redlock's acquire + release, one caller, for redlock-bench's peer row (LoadDriver
// --node-redlock DIR, where DIR holds node_modules with redlock@5.0.0-beta.2 and ioredis@5).
// Usage: node node-redlock-bench.js DIR PORTS (comma separated, all on 127.0.0.1).
// Long-lived, so that the driver can interleave its batches with the Java rows' (a warm process,
// as theirs): each line "KEY CYCLES" on stdin runs CYCLES acquire + release of KEY and answers one
// line, each cycle's nanoseconds (measured here, not across the pipe) separated by spaces.
const path = require('path');
const readline = require('readline');
const dir = process.argv[2];
const Redis = require(path.join(dir, 'node_modules', 'ioredis'));
const Redlock = require(path.join(dir, 'node_modules', 'redlock')).default;

async function main() {
  const clients = process.argv[3].split(',').map((p) => new Redis({ host: '127.0.0.1', port: +p }));
  await Promise.all(clients.map((c) => c.ping()));
  // One attempt, as the Java rows' tryAcquire: no retries; node-redlock's default drift.
  const redlock = new Redlock(clients, { retryCount: 0, retryJitter: 0 });
  console.log('ready');
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const [key, cycles] = line.trim().split(' ');
    const nanos = [];
    for (let i = 0; i < +cycles; i++) {
      const start = process.hrtime.bigint();
      const lock = await redlock.acquire([key], 30000);
      await lock.release();
      nanos.push(Number(process.hrtime.bigint() - start));
    }
    console.log(nanos.join(' '));
  }
  await Promise.all(clients.map((c) => c.quit()));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
