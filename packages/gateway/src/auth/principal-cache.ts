import type { Principal } from "./api-keys.ts";

const DEFAULT_CAPACITY = 10_000;

/**
 * Principals of active API keys, by key hash, trusted for one revocation version of the store
 * (ApiKeyRepository.revocationVersion): a new version empties it, so a revoked key is refused by
 * the next request after the store reports the revocation. Only keys the store accepted go in,
 * so unknown tokens cannot fill it.
 */
export class PrincipalCache {
  readonly #capacity: number;
  readonly #entries = new Map<string, Principal>();
  #version: number | undefined;

  constructor(capacity = DEFAULT_CAPACITY) {
    this.#capacity = capacity;
  }

  get(keyHash: string, version: number | undefined): Principal | undefined {
    if (version === undefined) return undefined;
    if (version !== this.#version) {
      this.#entries.clear();
      this.#version = version;
      return undefined;
    }
    return this.#entries.get(keyHash);
  }

  /** `version` is the one read before the store lookup: a revocation heard during it wins. */
  set(keyHash: string, principal: Principal, version: number | undefined): void {
    if (version === undefined || version !== this.#version) return;
    if (this.#entries.size >= this.#capacity) {
      // Maps iterate in insertion order: drop the oldest.
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
    this.#entries.set(keyHash, principal);
  }
}
