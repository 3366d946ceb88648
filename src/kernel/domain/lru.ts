/**
 * A bounded least-recently-used map on top of Map's insertion order: a hit moves the key
 * to the end, an insert past capacity evicts the first key. Enough for memoizing pure,
 * costly functions (PDA derivation) without a dependency.
 */
export interface Lru<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
  delete(key: K): void;
  readonly size: number;
}

export function createLru<K, V>(capacity: number): Lru<K, V> {
  if (!Number.isInteger(capacity) || capacity < 1) throw new Error('LRU capacity must be a positive integer');
  const map = new Map<K, V>();
  return {
    get(key) {
      const v = map.get(key);
      if (v === undefined) return undefined;
      map.delete(key);
      map.set(key, v);
      return v;
    },
    set(key, value) {
      map.delete(key);
      map.set(key, value);
      if (map.size > capacity) {
        const oldest = map.keys().next();
        if (!oldest.done) map.delete(oldest.value);
      }
    },
    delete(key) {
      map.delete(key);
    },
    get size() {
      return map.size;
    },
  };
}
