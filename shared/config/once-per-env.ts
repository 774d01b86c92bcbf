/**
 * `build` once per env object (an isolate's bindings and vars), then the
 * same result for every request or batch with that env: a worker's deps
 * hold nothing per request, and building them again (parsing the vars with
 * zod, a new drizzle instance whose prepared statements are then rebuilt)
 * is work no answer needs. An env made per call (the chaos wrappers of
 * development) simply gets its own. A `build` that throws (a misconfigured
 * env) caches nothing, so it throws again on the next call.
 */
export function oncePerEnv<E extends object, D>(build: (env: E) => D): (env: E) => D {
  const built = new WeakMap<E, D>();
  return (env) => {
    let deps = built.get(env);
    if (deps === undefined) {
      deps = build(env);
      built.set(env, deps);
    }
    return deps;
  };
}
