// `npm start`: build the library, compile the sample app against the built
// package (it imports 'nestjs-holdup' like any consumer) and run it.
import { execFileSync, spawn } from 'node:child_process';

const run = (...args) => execFileSync(process.execPath, args, { stdio: 'inherit' });
run('scripts/build.mjs');
run('node_modules/typescript/bin/tsc', '-p', 'sample-app/tsconfig.json');

const app = spawn(process.execPath, ['.tmp/sample-app/main.js'], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => app.kill(signal));
app.on('exit', (code) => process.exit(code ?? 0));
