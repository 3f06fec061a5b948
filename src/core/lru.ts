/**
 * A map that keeps only its `capacity` most recently used entries (a Map keeps insertion order, so
 * the first key is the least recently used). The worker's in-memory caches are each one of these,
 * so each is bounded by the size its `caches` setting names (0 keeps nothing).
 */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();

  /** `name` names the setting in the error a bad capacity gets (e.g. "preludes cache size"). */
  constructor(
    readonly capacity: number,
    name: string,
  ) {
    if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`${name} must be a non-negative integer, got ${capacity}`);
  }

  /** The value under `key`, now the most recently used; undefined when it is not kept. */
  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  /** Keeps `value` under `key` as the most recently used, dropping the least recently used past the capacity. */
  set(key: K, value: V): void {
    this.map.delete(key);
    if (this.capacity === 0) return;
    this.map.set(key, value);
    while (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  get size(): number {
    return this.map.size;
  }
}
