// Per-key token buckets. A policy allows `limit` requests per `windowSeconds`; the bucket holds
// at most `limit` tokens and refills continuously at limit/window per second, so bursts up to
// the limit pass and the long-run rate is bounded. Buckets live in each process: with several
// nodes on one store, each node allows its share, the limit divided by the live nodes (rounded
// up), so that behind a load balancer that spreads a key's requests the nodes together allow
// about the limit (docs/several-nodes.md).

import type { RatePolicy } from '../settings.js';

export interface RateDecision {
  allowed: boolean;
  /** `Ratelimit: limit=X, remaining=Y, reset=Z` (Z = seconds until the bucket is full again). */
  header: string;
  /** `RateLimitPolicy: X;w=Y`. */
  policyHeader: string;
  /** Seconds until one token is available (when refused). */
  retryAfter: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly nowMs: () => number = Date.now,
    /** How many nodes share each policy (live nodes on the store; 1 alone). */
    private readonly nodes: () => number = () => 1,
  ) {}

  take(bucketKey: string, whole: RatePolicy): RateDecision {
    const n = this.nodes();
    const policy = n > 1 ? { ...whole, limit: Math.max(1, Math.ceil(whole.limit / n)) } : whole;
    const t = this.nowMs();
    const perMs = policy.limit / (policy.windowSeconds * 1000);
    const b = this.buckets.get(bucketKey) ?? { tokens: policy.limit, at: t };
    // A clock that steps back refills nothing (and never drains the bucket).
    b.tokens = Math.min(policy.limit, b.tokens + Math.max(0, t - b.at) * perMs);
    b.at = t;
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    this.buckets.set(bucketKey, b);
    if (this.buckets.size > 100_000) this.sweep(t, perMs, policy.limit);
    const reset = Math.ceil((policy.limit - b.tokens) / perMs / 1000);
    return {
      allowed,
      header: `limit=${policy.limit}, remaining=${Math.floor(b.tokens)}, reset=${reset}`,
      policyHeader: `${policy.limit};w=${policy.windowSeconds}`,
      retryAfter: allowed ? 0 : Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000)),
    };
  }

  /** Drops buckets that have refilled completely; they carry no state. */
  private sweep(t: number, perMs: number, limit: number) {
    for (const [k, b] of this.buckets) if (b.tokens + (t - b.at) * perMs >= limit) this.buckets.delete(k);
  }
}
