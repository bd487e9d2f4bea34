// Worst single Map.set/delete while churning a 1M-entry Map (delete oldest + insert new), vs a 16k-entry one.
function churn(size, ops) {
  const m = new Map();
  for (let i = 0; i < size; i++) m.set('k' + i, i);
  let next = size,
    worst = 0,
    oldest = 0;
  for (let i = 0; i < ops; i++) {
    const t = process.hrtime.bigint();
    m.delete('k' + oldest++);
    m.set('k' + next++, i);
    const d = Number(process.hrtime.bigint() - t) / 1e6;
    if (d > worst) worst = d;
  }
  return worst;
}
for (const size of [1_000_000, 16_384]) {
  const runs = [1, 2, 3].map(() => churn(size, 1_200_000).toFixed(1));
  console.log(
    `size ${size}: worst single delete+set over 1.2M ops (ms), 3 runs: ${runs.join(', ')}`,
  );
}
