import type { ApiKeyWithTeam } from '../../storage/repos/index.js';

export interface KeyLookup {
  byPublicId(publicId: string): Promise<ApiKeyWithTeam | undefined>;
}

/**
 * Keeps the keys (with their teams) that authenticated lately, so that a request does not pay a
 * query to find its key. Every entry is dropped as soon as the change stamp moves, so a revoked
 * or suspended key is refused on the very next request whoever revoked it. Unknown ids are never
 * kept: a caller inventing tokens cannot grow the cache.
 */
export class CachedKeyLookup implements KeyLookup {
  private readonly entries = new Map<string, ApiKeyWithTeam>();
  private stampSeen = '';

  constructor(
    private readonly source: KeyLookup,
    private readonly changeStamp: () => string,
    private readonly maxEntries = 10_000,
  ) {}

  async byPublicId(publicId: string): Promise<ApiKeyWithTeam | undefined> {
    const stamp = this.changeStamp();
    if (stamp !== this.stampSeen) {
      this.entries.clear();
      this.stampSeen = stamp;
    }
    const kept = this.entries.get(publicId);
    if (kept) return kept;
    const found = await this.source.byPublicId(publicId);
    // Kept only if nothing changed while it was read.
    if (found && this.changeStamp() === stamp) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(publicId, found);
    }
    return found;
  }
}
