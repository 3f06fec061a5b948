/**
 * A zod schema built on first use instead of when its module loads.
 *
 * Workflow code loads every module it imports once per workflow run (Temporal evaluates the bundle's
 * modules afresh for each run, so that no state leaks between runs), and each cached run keeps them. A
 * zod schema is costly to build (each `.optional()`, `.strict()`, … makes another instance with its own
 * closures), so the schemas at the top of our modules cost every session start, every continue-as-new
 * and every rebuild of an evicted session their building time, and every cached session their memory,
 * whether the run ever uses them or not. Most runs use few of them.
 *
 * The result stands for the schema itself (a Proxy that builds it on the first property read and forwards
 * every operation to it): callers, `z.infer<typeof x>`, and other schemas that contain it do not change.
 * zod's methods close over their own instance, so nothing depends on `this` being the proxy.
 */
export function lazySchema<T extends object>(build: () => T): T {
  let built: T | undefined;
  const real = (): T => (built ??= build());
  // An empty, extensible target: a Proxy may then report whatever the real schema has (the invariants of
  // get/has/ownKeys bind only a target's non-configurable or non-extensible parts).
  return new Proxy(Object.create(null) as T, {
    get: (_target, key) => Reflect.get(real(), key),
    set: (_target, key, value) => Reflect.set(real(), key, value),
    has: (_target, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
      // Reported as configurable: the target has no such property, and a Proxy may not report a
      // non-configurable one its target lacks.
      return descriptor && { ...descriptor, configurable: true };
    },
    defineProperty: (_target, key, descriptor) => Reflect.defineProperty(real(), key, descriptor),
    deleteProperty: (_target, key) => Reflect.deleteProperty(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
}
