import type { RequestLike } from '../keys/key-strategy.js';

const socketRequests = new WeakMap<object, RequestLike>();

/**
 * The request object of a transport whose caller is a socket (a TCP peer, a
 * `ws` connection without its upgrade request): one per socket, the same for
 * every call on it, so that what the guard leaves on the request for the
 * interceptor (the checks a limit charging by outcome gives back) is found
 * again after the handler.
 */
export function requestOfSocket(socket: { readonly remoteAddress?: string }): RequestLike {
  let request = socketRequests.get(socket);
  if (request === undefined) socketRequests.set(socket, (request = { socket }));
  return request;
}
