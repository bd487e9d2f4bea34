import type { ChildProcess } from 'node:child_process';

/** The next IPC message of `type` from a worker; rejects if the worker exits first. */
export function nextMessage<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type: string }) => {
      if (message.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(message as T);
    };
    const onExit = (code: number | null) =>
      reject(new Error(`worker exited (${code}) before sending "${type}"`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
