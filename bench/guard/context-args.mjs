// How the HTTP transport reads a call's request and response (issue 27):
// Nest's `switchToHttp()` against the context's arguments, each on a fresh
// ExecutionContextHost per call as a request has. One process, alternated.
//   node bench/guard/context-args.mjs
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';

const viaSwitchToHttp = (context) => {
  const http = context.switchToHttp();
  return { request: http.getRequest(), response: http.getResponse() };
};
const viaArguments = (context) => ({
  request: context.getArgByIndex(0),
  response: context.getArgByIndex(1),
});
let sink = 0;
const request = { ip: '10.0.0.1' };
const response = {};
function run(read, n) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const exchange = read(new ExecutionContextHost([request, response, undefined]));
    sink += exchange.request === request ? 1 : 0;
  }
  return Number(process.hrtime.bigint() - start) / n;
}
const runs = { switchToHttp: [], getArgByIndex: [] };
for (let k = 0; k < 7; k++) {
  runs.switchToHttp.push(run(viaSwitchToHttp, 1e6));
  runs.getArgByIndex.push(run(viaArguments, 1e6));
}
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
console.log(
  `ns per call, a context made per call included (median of 7): switchToHttp ${median(runs.switchToHttp).toFixed(1)}, getArgByIndex ${median(runs.getArgByIndex).toFixed(1)}${sink > 0 ? '' : ' '}`,
);
