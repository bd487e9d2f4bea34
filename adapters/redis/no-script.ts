/**
 * Whether a failed `EVALSHA` means the server does not have the script
 * (after a restart, a failover, `SCRIPT FLUSH`), so that the store sends it
 * again with `EVAL`. Recognised by the error code alone, the reply's first
 * word, never by the text after it: Valkey 8 changed that text ("No
 * matching script." where Redis says "No matching script. Please use
 * EVAL."), and another error (a script's own `ERR ...`) may well mention
 * NOSCRIPT further on.
 *
 * - ioredis, iovalkey, node-redis: the message is the reply,
 *   `NOSCRIPT <text>`.
 * - Valkey GLIDE (`@valkey/valkey-glide`): a `RequestError` whose message
 *   names the code's kind, `... - NoScriptError: <text>`.
 *
 * @internal
 */
export function isNoScript(error: unknown): boolean {
  const message = messageOf(error);
  if (message === undefined) return false;
  return NOSCRIPT_REPLY.test(message) || GLIDE_NOSCRIPT.test(message);
}

/** The reply's error code, its first word. */
const NOSCRIPT_REPLY = /^NOSCRIPT(?:\s|$)/;
/** GLIDE's rendering of that code ("An error was signalled by the server: - NoScriptError: ..."). */
const GLIDE_NOSCRIPT = /^An error was signalled by the server: - NoScriptError:/;

function messageOf(error: unknown): string | undefined {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && 'message' in error) {
    const { message } = error as { message: unknown };
    return typeof message === 'string' ? message : undefined;
  }
  return undefined;
}
