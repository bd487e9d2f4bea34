/** The bits of a request the client address is read from (Express and Fastify both have them). */
export interface AddressedRequest {
  /** What the HTTP platform resolved, honouring its own trust-proxy setting (Express `req.ip`, Fastify `request.ip`). */
  readonly ip?: unknown;
  readonly headers?: Record<string, string | string[] | undefined>;
  readonly socket?: { readonly remoteAddress?: string };
  readonly raw?: { readonly socket?: { readonly remoteAddress?: string } };
}

/** The client address of a request as the module sees it: grouped (IPv6 by its subnet), or `undefined` when there is none. */
export type RequestAddress = (request: AddressedRequest | undefined) => string | undefined;
