// A store whose nth call (the first by default) of one method, once it has returned, waits until
// the test releases it: a decision caught between its read and its write, while another process
// decides meanwhile.
export function pauseAfterCall<T extends object>(inner: T, method: keyof T & string, nth = 1): { target: T; reached: Promise<void>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let reach!: () => void;
  const reached = new Promise<void>((r) => (reach = r));
  let calls = 0;
  const target = new Proxy(inner, {
    get(t, prop, receiver) {
      const v = Reflect.get(t, prop, receiver) as unknown;
      if (typeof v !== "function") return v;
      if (prop !== method) return v.bind(t);
      return async (...args: unknown[]) => {
        const out = await (v as (...a: unknown[]) => Promise<unknown>).apply(t, args);
        if (++calls === nth) {
          reach();
          await gate;
        }
        return out;
      };
    },
  });
  return { target, reached, release };
}
