/**
 * The identity of one `RateLimitModule` instance, as channel messages carry
 * it: opaque, compared by reference. `id` is for logs and debugging only.
 */
export interface RateLimitOwner {
  readonly id: number;
}
